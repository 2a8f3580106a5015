"""``softcap``: c·tanh(x/c) bounds the scores smoothly.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/softcap.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec


class SoftcapParams(DemoParams):
    cap: float = Field(
        50.0, ge=1.0, le=1000.0, title="Cap c", description="50 in Gemma 2, 30 in Grok-1."
    )
    x: float = Field(
        100.0, ge=-10_000.0, le=10_000.0, title="Score x", description="The score to cap."
    )


SOFTCAP = DemoSpec(
    name="softcap",
    version=1,
    title="Logit soft-capping",
    description="c·tanh(x/c) as Gemma 2 (c = 50) and Grok-1 (c = 30) apply it to attention "
    "scores: close to x for small scores, bounded by c for large ones.",
    params=SoftcapParams,
    outputs={
        "capped": "c·tanh(x/c).",
        "reduction": "x − c·tanh(x/c).",
        "slope": "d/dx of the cap, 1 − tanh²(x/c): the gradient that still flows.",
    },
    worst_cases=({"cap": 1000.0, "x": 10_000.0},),
)

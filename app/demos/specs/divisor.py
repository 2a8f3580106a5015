"""``divisor``: what real models divide q·k by.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/divisor.py``. No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec

ModelName = Literal[
    "transformer-base",
    "bert-base",
    "llama-3-70b",
    "mistral-7b",
    "mixtral-8x7b",
    "mistral-nemo-12b",
    "gemma-7b",
    "gemma-2-9b",
    "gemma-2-27b",
    "gemma-3-27b",
    "gemma-4",
    "deepseek-v3",
    "deepseek-v3-no-yarn",
    "grok-1",
    "t5",
]


class DivisorParams(DemoParams):
    model: ModelName = Field("llama-3-70b", title="Model", description="A model from the table.")


DIVISOR = DemoSpec(
    name="divisor",
    version=2,
    title="What real models divide q·k by",
    description="The effective score divisor of published models, with sources: most use "
    "sqrt(head_dim), some do not.",
    params=DivisorParams,
    outputs={
        "divisor": "Effective divisor of q·k (1 / multiplier).",
        "multiplier": "What the scores are multiplied by.",
        "head_dim": "Query/key head dimension, where known.",
        "sqrt_head_dim": "sqrt(head_dim): the textbook divisor, for comparison.",
        "hidden_over_heads": "hidden size / query heads: not always head_dim.",
        "softcap": "c in c·tanh(x/c) applied to the scores, if the model caps them.",
    },
    uses_device=False,
    worst_cases=({"model": "deepseek-v3"},),
)

"""``sdpa``: what PyTorch's ``scaled_dot_product_attention`` divides by, and its causal mask.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/sdpa.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class SdpaParams(DemoParams):
    query_dim: int = Field(
        64, ge=1, le=512, title="E (query/key dim)", description="query.size(-1) = key.size(-1)."
    )
    value_dim: int = Field(32, ge=1, le=512, title="Ev (value dim)", description="value.size(-1).")
    queries: int = Field(8, ge=1, le=256, title="L (queries)", description="Target length L.")
    keys: int = Field(16, ge=1, le=2048, title="S (keys)", description="Source length S.")
    decode_keys: int = Field(
        4,
        ge=2,
        le=2048,
        title="Cached keys when decoding",
        description="S for the one-query (L = 1) causal check.",
    )
    seed: Seed = 0


SDPA = DemoSpec(
    name="sdpa",
    version=1,
    title="PyTorch SDPA: default scale and the causal mask",
    description="Checks that scaled_dot_product_attention divides by sqrt(E), the query head "
    "dim, and that is_causal=True with one query and a key cache attends to key 0 only.",
    params=SdpaParams,
    outputs={
        "default_scale": "1/sqrt(E), SDPA's default scale.",
        "default_vs_query_dim": "Largest difference between SDPA and softmax(QKᵀ/sqrt(E))V.",
        "default_vs_value_dim": "Largest difference between SDPA and softmax(QKᵀ/sqrt(Ev))V: "
        "not 0 when E ≠ Ev.",
        "causal_decode_vs_first_value": "Largest difference between SDPA(is_causal=True) and "
        "v[0] for one query (L = 1).",
        "causal_decode_vs_full": "Largest difference between SDPA(is_causal=True) and SDPA with "
        "no mask for L = 1: how wrong the top-left mask is for decoding.",
        "bottom_right_decode_vs_full": "The same with a bottom-right aligned mask: 0.",
    },
    worst_cases=(
        {"query_dim": 512, "value_dim": 512, "queries": 256, "keys": 2048, "decode_keys": 2048},
    ),
)

"""``quantized_k``: the score error from storing K as int8 or int4 with absmax scales.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/quantization.py``. No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class QuantizedKParams(DemoParams):
    d: int = Field(128, ge=16, le=512, title="d", description="Head dimension.")
    keys: int = Field(4096, ge=16, le=8192, title="Keys", description="Cached keys (tokens).")
    queries: int = Field(
        64, ge=1, le=256, title="Queries", description="Queries scored against them."
    )
    bits: Literal[8, 4] = Field(8, title="Bits", description="int8 (qmax 127) or int4 (qmax 7).")
    granularity: Literal["per_token", "per_tensor"] = Field(
        "per_token",
        title="Scale granularity",
        description="One absmax scale per key (token), or one for the whole tensor.",
    )
    seed: Seed = 0


QUANTIZED_K = DemoSpec(
    name="quantized_k",
    version=1,
    title="Quantising the K cache to int8 or int4",
    description="Absmax-quantises random keys and measures the error it adds to scaled scores "
    "against the uniform-rounding prediction mean(Δ²)/12.",
    params=QuantizedKParams,
    outputs={
        "error_variance": "Variance of the error in q·k/sqrt(d) from quantising K.",
        "correlation": "Correlation of quantised with exact scores.",
        "max_abs_error": "Largest score error.",
        "mean_step_sq": "mean(Δ²), Δ = absmax / qmax.",
        "score_variance": "Variance of the exact scaled scores.",
    },
    worst_cases=({"d": 512, "keys": 8192, "queries": 256, "bits": 4},),
)

"""``score_variance``: the variance of q·k, and what each divisor does to it.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/variance.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ELEMENTS = 2**23


"""Cap on d_k × samples: 2 × 8.4M fp64 normal draws, about 0.35 s on an idle core and
under 1 s on a loaded one (2**24 reached 2 s there)."""


Divisor = Literal["none", "sqrt_dk", "dk", "sqrt_dmodel"]


class ScoreVarianceParams(DemoParams):
    d_k: int = Field(
        128, ge=1, le=4096, title="d_k", description="Components in each query and key vector."
    )
    samples: int = Field(
        20_000,
        ge=100,
        le=200_000,
        title="Samples",
        description=f"(q, k) pairs drawn; d_k × samples may be at most {MAX_ELEMENTS:,}.",
    )
    divisor: Divisor = Field(
        "sqrt_dk",
        title="Divisor",
        description="What q·k is divided by: 1, sqrt(d_k), d_k or sqrt(d_model).",
    )
    num_heads: int = Field(
        64,
        ge=1,
        le=128,
        title="Heads",
        description="Heads per layer: d_model = d_k × heads (used by the sqrt_dmodel divisor).",
    )
    seed: Seed = 0

    @field_validator("samples")
    @classmethod
    def _within_budget(cls, samples: int, info: ValidationInfo) -> int:
        d_k = info.data.get("d_k")
        if d_k is not None and d_k * samples > MAX_ELEMENTS:
            raise PydanticCustomError(
                "budget",
                "d_k × samples must be at most {limit} to keep one request under 2 s, "
                "got {d_k} × {samples}: lower samples to {fit} or less",
                {
                    "limit": f"{MAX_ELEMENTS:,}",
                    "d_k": d_k,
                    "samples": samples,
                    "fit": MAX_ELEMENTS // d_k,
                },
            )
        return samples


SCORE_VARIANCE = DemoSpec(
    name="score_variance",
    version=1,
    title="Variance of q·k and the divisor",
    description="Draws unit-variance queries and keys and measures the variance of their "
    "scaled dot product: d_k / divisor², so only sqrt(d_k) gives 1.",
    params=ScoreVarianceParams,
    outputs={
        "variance": "Measured variance of q·k / divisor.",
        "std": "Its square root.",
        "mean": "Measured mean of q·k / divisor (theory: 0).",
        "divisor_value": "The number q·k was divided by.",
        "d_model": "d_k × heads.",
        "relative_error": "Distance of measured / theory variance from 1: sampling noise, "
        "about sqrt(2 / samples).",
    },
    worst_cases=(
        {"d_k": 4096, "samples": 2048, "divisor": "none"},
        {"d_k": 41, "samples": 200_000, "divisor": "none"},
    ),
)

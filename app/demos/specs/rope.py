"""``rope``: rotary position embeddings keep the variance and depend only on m − n.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/rope.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ELEMENTS = 2**24


"""Cap on d × samples: four rotations of 16.8M values stay under about 1.5 s on 2 cores."""


class RopeParams(DemoParams):
    d: int = Field(128, ge=2, le=1024, title="d", description="Head dimension (even).")
    base: float = Field(
        10_000.0,
        ge=2.0,
        le=1e8,
        title="Base",
        description="RoPE base θ (rope_theta): 10000 in the paper, 500000 in Llama 3.",
    )
    samples: int = Field(
        100_000,
        ge=100,
        le=200_000,
        title="Samples",
        description=f"(q, k) pairs drawn; d × samples may be at most {MAX_ELEMENTS:,}.",
    )
    max_position: int = Field(
        8192,
        ge=1,
        le=1_048_576,
        title="Max position",
        description="Positions drawn from 0 to this − 1.",
    )
    dtype: Literal["float64", "float32"] = Field(
        "float64", title="Precision", description="Precision of the vectors and rotation angles."
    )
    seed: Seed = 0

    @field_validator("d")
    @classmethod
    def _even(cls, d: int) -> int:
        if d % 2:
            raise PydanticCustomError(
                "even", "d must be even (RoPE rotates pairs), got {d}", {"d": d}
            )
        return d

    @field_validator("samples")
    @classmethod
    def _within_budget(cls, samples: int, info: ValidationInfo) -> int:
        d = info.data.get("d")
        if d is not None and d * samples > MAX_ELEMENTS:
            raise PydanticCustomError(
                "budget",
                "d × samples must be at most {limit} to keep one request under 2 s, "
                "got {d} × {samples}: lower samples to {fit} or less",
                {
                    "limit": f"{MAX_ELEMENTS:,}",
                    "d": d,
                    "samples": samples,
                    "fit": MAX_ELEMENTS // d,
                },
            )
        return samples


ROPE = DemoSpec(
    name="rope",
    version=1,
    title="RoPE keeps the variance and depends only on relative position",
    description="Rotates unit-variance queries and keys by RoPE at random positions: the "
    "variance of q·k stays d, norms do not change, and q_m·k_n equals q_(m+t)·k_(n+t).",
    params=RopeParams,
    outputs={
        "variance_before": "Variance of q·k without rotation.",
        "variance_after": "Variance of q_m·k_n after rotating q to m and k to n.",
        "max_norm_change": "Largest relative change of the norm of q under rotation.",
        "invariance_error": "Largest difference between q_m·k_n and q_(m+t)·k_(n+t).",
        "longest_wavelength": "2π·base^((d−2)/d): positions for the slowest pair to turn once.",
    },
    worst_cases=(
        {"d": 1024, "samples": 16384, "max_position": 1_048_576},
        {"d": 84, "samples": 199_728, "max_position": 1_048_576},
    ),
)

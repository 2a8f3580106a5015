"""``score_variance``: the variance of q·k, and what each divisor does to it.

Vaswani et al. (2017), footnote 4: for q and k with independent components of
mean 0 and variance 1, q·k has mean 0 and variance d_k. Dividing by s scales
the variance by 1/s², so only s = sqrt(d_k) brings it back to 1.
"""

import math
from typing import Literal

import torch
from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.worker.demo import Demo, Outcome
from app.worker.demos._common import histogram, row_chunks
from app.worker.device import seeded
from app.worker.params import DemoParams, Seed

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


def divisor_value(divisor: Divisor, *, d_k: int, num_heads: int) -> float:
    """The number q·k is divided by.

    Example:
        >>> divisor_value("sqrt_dmodel", d_k=128, num_heads=64)
        90.50966799187809
    """
    return {
        "none": 1.0,
        "sqrt_dk": math.sqrt(d_k),
        "dk": float(d_k),
        "sqrt_dmodel": math.sqrt(d_k * num_heads),
    }[divisor]


def compute(params: ScoreVarianceParams, device: torch.device) -> Outcome:
    """Draw ``samples`` pairs (q, k) in fp64 and measure the spread of q·k / divisor."""
    generator = seeded(device, params.seed)
    divisor = divisor_value(params.divisor, d_k=params.d_k, num_heads=params.num_heads)
    parts = []
    # Draw in chunks so that memory stays flat in d_k × samples.
    for start, stop in row_chunks(params.samples, params.d_k):
        shape = (stop - start, params.d_k)
        q = torch.randn(shape, generator=generator, dtype=torch.float64, device=device)
        k = torch.randn(shape, generator=generator, dtype=torch.float64, device=device)
        parts.append((q * k).sum(-1))
    scores = torch.cat(parts) / divisor
    variance = scores.var().item()
    expected = params.d_k / divisor**2
    return Outcome(
        outputs={
            "variance": variance,
            "std": math.sqrt(variance),
            "mean": scores.mean().item(),
            "divisor_value": divisor,
            "d_model": float(params.d_k * params.num_heads),
            "relative_error": abs(variance / expected - 1),
        },
        theory={
            "variance": expected,
            "std": math.sqrt(expected),
            "mean": 0.0,
            "relative_error": 0.0,
        },
        series=histogram(
            scores, name="q·k / divisor", x_label="scaled score", normal_variance=expected
        ),
    )


SCORE_VARIANCE = Demo(
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
    compute=compute,
    worst_cases=(
        {"d_k": 4096, "samples": 2048, "divisor": "none"},
        {"d_k": 41, "samples": 200_000, "divisor": "none"},
    ),
)

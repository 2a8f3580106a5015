"""``rope``: rotary position embeddings keep the variance and depend only on m − n.

RoPE (Su et al. 2021) rotates each pair of components (2i, 2i+1) of a query at
position m by the angle m·θ_i, θ_i = base^(−2i/d). A rotation keeps norms, so
for unit-variance q and k the variance of q·k stays d; and because
R_mᵀR_n = R_{n−m}, the score depends only on the offset m − n. In fp64 that
holds to about 1e-11; in fp32 the angle m·θ_i loses digits as m grows.
"""

import math
from typing import Literal

import torch
from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import DTYPES, row_chunks
from app.worker.device import seeded
from app.worker.params import DemoParams, Seed

MAX_ELEMENTS = 2**24
"""Cap on d × samples: four rotations of 16.8M values stay under about 1.5 s on 2 cores."""
CURVE_POINTS = 512


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


def frequencies(d: int, base: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """θ_i = base^(−2i/d) for i < d/2, computed in ``dtype`` as reference code does."""
    return 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype, device=device) / d)


def rotate(x: torch.Tensor, positions: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Rotate each pair (2i, 2i+1) of every row of ``x`` by ``position·θ_i``."""
    angles = positions[:, None] * theta[None, :]
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[:, 0::2], x[:, 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(1)


def compute(params: RopeParams, device: torch.device) -> Outcome:
    """Measure variance, norms and shift invariance of rotated dot products."""
    dtype = DTYPES[params.dtype]
    generator = seeded(device, params.seed)
    theta = frequencies(params.d, params.base, dtype, device)
    before, after = [], []
    norm_change = invariance = 0.0
    for start, stop in row_chunks(params.samples, params.d):
        rows = stop - start
        q = torch.randn(rows, params.d, generator=generator, dtype=dtype, device=device)
        k = torch.randn(rows, params.d, generator=generator, dtype=dtype, device=device)
        m, n, shifted_m, shifted_n = _positions(generator, rows, params.max_position, device)
        q_m, k_n = rotate(q, m.to(dtype), theta), rotate(k, n.to(dtype), theta)
        before.append((q * k).sum(-1).double())
        after.append((q_m * k_n).sum(-1).double())
        change = (q_m.norm(dim=-1) / q.norm(dim=-1) - 1).abs().max().item()
        shifted = (
            rotate(q, shifted_m.to(dtype), theta) * rotate(k, shifted_n.to(dtype), theta)
        ).sum(-1)
        norm_change = max(norm_change, change)
        invariance = max(invariance, (after[-1] - shifted.double()).abs().max().item())
    curve_x = torch.linspace(0, params.max_position - 1, min(CURVE_POINTS, params.max_position))
    curve_x = curve_x.round().to(dtype=dtype, device=device)
    probe = torch.randn(1, params.d, generator=generator, dtype=dtype, device=device)
    curve = rotate(probe.expand(len(curve_x), -1), curve_x, theta) @ probe[0]
    return Outcome(
        outputs={
            "variance_before": torch.cat(before).var().item(),
            "variance_after": torch.cat(after).var().item(),
            "max_norm_change": norm_change,
            "invariance_error": invariance,
            "longest_wavelength": 2 * math.pi * params.base ** ((params.d - 2) / params.d),
        },
        theory={
            "variance_before": float(params.d),
            "variance_after": float(params.d),
            "max_norm_change": 0.0,
            "invariance_error": 0.0,
        },
        series=[
            Series(
                name="q_m · q_0 for one random q",
                kind="line",
                x=curve_x.tolist(),
                y=curve.tolist(),
                x_label="relative position m − n",
                y_label="score",
            )
        ],
    )


def _positions(
    generator: torch.Generator, rows: int, max_position: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random m, n and a shift t with m, n, m + t, n + t all in [0, max_position)."""
    m = torch.randint(max_position, (rows,), generator=generator, device=device)
    n = torch.randint(max_position, (rows,), generator=generator, device=device)
    low = -torch.minimum(m, n)
    high = max_position - 1 - torch.maximum(m, n)
    uniform = torch.rand(rows, generator=generator, dtype=torch.float64, device=device)
    shift = low + (uniform * (high - low + 1)).floor().long().clamp(max=high - low)
    return m, n, m + shift, n + shift


ROPE = Demo(
    name="rope",
    version=1,
    title="RoPE keeps the variance and depends only on relative position",
    description="Rotates unit-variance queries and keys by RoPE at random positions: the "
    "variance of q·k stays d, norms do not change, and q_m·k_n equals q_(m+t)·k_(n+t).",
    params=RopeParams,
    outputs={
        "variance_before": "Variance of q·k without rotation.",
        "variance_after": "Variance of q_m·k_n after rotating q to m and k to n.",
        "max_norm_change": "Largest relative change of |q| under rotation.",
        "invariance_error": "Largest |q_m·k_n − q_(m+t)·k_(n+t)| over the samples.",
        "longest_wavelength": "2π·base^((d−2)/d): positions for the slowest pair to turn once.",
    },
    compute=compute,
    worst_cases=(
        {"d": 1024, "samples": 16384, "max_position": 1_048_576},
        {"d": 84, "samples": 199_728, "max_position": 1_048_576, "dtype": "float32"},
    ),
)

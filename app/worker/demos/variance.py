"""``score_variance``: the variance of q·k, and what each divisor does to it.

Vaswani et al. (2017), footnote 4: for q and k with independent components of
mean 0 and variance 1, q·k has mean 0 and variance d_k. Dividing by s scales
the variance by 1/s², so only s = sqrt(d_k) brings it back to 1.
"""

import math

import torch

from app.demos.specs import variance as spec
from app.demos.specs.variance import Divisor, ScoreVarianceParams
from app.worker.demo import Demo, Outcome
from app.worker.demos._common import histogram, row_chunks
from app.worker.device import seeded


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


SCORE_VARIANCE = Demo(spec=spec.SCORE_VARIANCE, compute=compute)

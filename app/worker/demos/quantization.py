"""``quantized_k``: the score error from storing K as int8 or int4 with absmax scales.

Symmetric absmax quantisation stores round(k / Δ) with Δ = absmax / qmax
(qmax = 127 for int8, 7 for int4), per key (per token) or one Δ for the whole
tensor. Rounding errors are close to uniform on [−Δ/2, Δ/2], variance Δ²/12,
so the error of a score q·k̂/sqrt(d) with unit-variance q has variance
mean(Δ²)/12: the 1/sqrt(d) and the d components cancel.
"""

import math

import torch

from app.demos.specs import quantization as spec
from app.demos.specs.quantization import QuantizedKParams
from app.worker.demo import Demo, Outcome
from app.worker.demos._common import histogram
from app.worker.device import seeded


def quantize(k: torch.Tensor, *, bits: int, per_token: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Absmax-quantise ``k`` and return (dequantised k, step Δ per row).

    Example:
        >>> k = torch.tensor([[1.0, -0.5, 0.26]], dtype=torch.float64)
        >>> k_hat, step = quantize(k, bits=4, per_token=True)
        >>> k_hat.tolist(), round(step.item(), 4)
        ([[1.0, -0.5714285714285714, 0.2857142857142857]], 0.1429)
    """
    qmax = 2 ** (bits - 1) - 1
    absmax = k.abs().amax(dim=-1, keepdim=True) if per_token else k.abs().amax().expand(len(k), 1)
    step = absmax / qmax
    # In place after the first division: K may be tens of MB, and each
    # temporary copy counts against the request's memory budget.
    return (k / step).round_().clamp_(-qmax, qmax).mul_(step), step.squeeze(-1)


def compute(params: QuantizedKParams, device: torch.device) -> Outcome:
    """Score ``queries`` against exact and quantised keys and compare (fp64)."""
    generator = seeded(device, params.seed)
    k = torch.randn(params.keys, params.d, generator=generator, dtype=torch.float64, device=device)
    q = torch.randn(
        params.queries, params.d, generator=generator, dtype=torch.float64, device=device
    )
    k_hat, step = quantize(k, bits=params.bits, per_token=params.granularity == "per_token")
    scale = 1 / math.sqrt(params.d)
    exact = (q @ k.T).mul_(scale).flatten()
    del k  # no longer needed: free it before the second score matrix
    approx = (q @ k_hat.T).mul_(scale).flatten()
    error = approx - exact
    predicted = (step**2).mean().item() / 12
    score_variance = exact.var().item()
    correlation = _correlation(exact, approx)
    return Outcome(
        outputs={
            "error_variance": error.var().item(),
            "correlation": correlation,
            "max_abs_error": error.abs().max().item(),
            "mean_step_sq": (step**2).mean().item(),
            "score_variance": score_variance,
        },
        theory={
            "error_variance": predicted,
            # Independent error on a unit-variance score: corr = 1/sqrt(1 + var_e/var_s).
            "correlation": 1 / math.sqrt(1 + predicted / score_variance),
            "score_variance": 1.0,
        },
        series=histogram(error, name="score error", x_label="q·k̂/√d − q·k/√d"),
    )


def _correlation(a: torch.Tensor, b: torch.Tensor) -> float:
    centred_a, centred_b = a - a.mean(), b - b.mean()
    return float((centred_a @ centred_b) / (centred_a.norm() * centred_b.norm()))


QUANTIZED_K = Demo(spec=spec.QUANTIZED_K, compute=compute)

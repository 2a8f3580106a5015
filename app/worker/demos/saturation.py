"""``softmax_saturation`` and ``temperature``: what the spread of the logits does to softmax.

Logits with standard deviation σ over n keys give a mean entropy near
ln n − σ²/2 while σ is small (for Gaussian logits E[e^x] = e^{σ²/2}), so with
the sqrt(d_k) divisor (σ ≈ 1) the rows stay spread out. Without it σ ≈ sqrt(d_k)
and rows saturate: one weight near 1, the softmax Jacobian near 0, and so
little gradient through those rows (Vaswani et al. 2017, §3.2.1). The claim is
about the saturated rows; the median Jacobian norm is not lower in every
unscaled setting.
"""

import math

import torch

from app.demos.specs import saturation as spec
from app.demos.specs.saturation import SaturationParams, TemperatureParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import attention_logits, row_stats
from app.worker.device import seeded

SWEEP_D_K = (16, 32, 64, 128, 256, 512)
SWEEP_ROWS = 500
"""Rows per point of the charts: enough for two decimals, cheap next to the main run."""
SATURATED = 0.99
"""A row is saturated when its largest weight exceeds this."""


THEORY_MIN_KEYS = 64
THEORY_MAX_STD = 1.01
ENTROPY_NOTE = (
    "mean_entropy theory is ln(keys) − σ²/2 for logits of standard deviation σ: a large-keys "
    "approximation, given only for σ ≤ 1 and keys ≥ 64, where it is within 1%."
)


def entropy_theory(keys: int, logit_std: float) -> float | None:
    """ln n − σ²/2, or None where that approximation is not honest.

    Measured against 4000 rows of Gaussian logits, it is within 1% for
    n ≥ 64 keys and σ ≤ 1 (4.365 vs 4.352 at n = 128, σ = 1), and off by 4%
    at n = 16 or by 10% at σ = 2, so it is offered only for n ≥ 64 and σ ≤ 1
    (1.01, to let a temperature typed as 11.3137 for sqrt(128) through).

    Example:
        >>> round(entropy_theory(128, 1.0), 3)
        4.352
        >>> entropy_theory(128, 2.0) is None
        True
    """
    if keys < THEORY_MIN_KEYS or logit_std > THEORY_MAX_STD:
        return None
    return math.log(keys) - logit_std**2 / 2


def compute_saturation(params: SaturationParams, device: torch.device) -> Outcome:
    """Softmax statistics of ``rows`` queries against ``keys`` keys, scaled or not."""
    generator = seeded(device, params.seed)
    divisor = math.sqrt(params.d_k) if params.scaled else 1.0
    raw = attention_logits(
        generator, rows=params.rows, keys=params.keys, d_k=params.d_k, device=device
    )
    stats = row_stats(raw, divisor)
    logit_std = math.sqrt(params.d_k) / divisor
    theory = {"logit_std": logit_std}
    if (entropy := entropy_theory(params.keys, logit_std)) is not None:
        theory["mean_entropy"] = entropy
    series = _sweep_d_k(generator, keys=params.keys, device=device)
    return Outcome(
        outputs={
            "mean_entropy": stats.entropy.mean().item(),
            "max_entropy": math.log(params.keys),
            "mean_max_weight": stats.max_weight.mean().item(),
            "saturated_share": (stats.max_weight > SATURATED).double().mean().item(),
            "small_jacobian_share": (stats.jacobian_norm < params.jacobian_threshold)
            .double()
            .mean()
            .item(),
            "median_jacobian_norm": stats.jacobian_norm.median().item(),
            "logit_std": raw.std().item() / divisor,
        },
        theory=theory,
        series=series,
        notes=[ENTROPY_NOTE],
    )


def _sweep_d_k(generator: torch.Generator, *, keys: int, device: torch.device) -> list[Series]:
    """Mean entropy and saturated share against d_k, scaled and unscaled, as chart lines."""
    series = []
    for scaled in (True, False):
        entropy, saturated = [], []
        for d_k in SWEEP_D_K:
            raw = attention_logits(generator, rows=SWEEP_ROWS, keys=keys, d_k=d_k, device=device)
            stats = row_stats(raw, math.sqrt(d_k) if scaled else 1.0)
            entropy.append(stats.entropy.mean().item())
            saturated.append((stats.max_weight > SATURATED).double().mean().item())
        for y, y_label in (
            (entropy, "mean entropy (nats)"),
            (saturated, "share of rows with max weight > 0.99"),
        ):
            series.append(
                Series(
                    name="scaled" if scaled else "unscaled",
                    kind="line",
                    x=list(SWEEP_D_K),
                    y=y,
                    x_label="d_k",
                    y_label=y_label,
                )
            )
    return series


def compute_temperature(params: TemperatureParams, device: torch.device) -> Outcome:
    """Mean softmax entropy of the same raw scores at temperature T, sqrt(d_k) and 1."""
    generator = seeded(device, params.seed)
    raw = attention_logits(
        generator, rows=params.rows, keys=params.keys, d_k=params.d_k, device=device
    )
    sqrt_dk = math.sqrt(params.d_k)

    def mean_entropy(scores: torch.Tensor, temperature: float) -> float:
        return row_stats(scores, temperature).entropy.mean().item()

    logit_std = sqrt_dk / params.temperature
    theory = {"logit_std": logit_std}
    if (entropy := entropy_theory(params.keys, logit_std)) is not None:
        theory["mean_entropy"] = entropy
    # 33 temperatures from sqrt(d_k)/32 to 8·sqrt(d_k), evenly spaced in log T.
    grid = [sqrt_dk * 2 ** (k / 4) for k in range(-20, 13)]
    subset = raw[:SWEEP_ROWS]
    measured = [mean_entropy(subset, t) for t in grid]
    series = [
        Series(
            name="measured",
            kind="line",
            x=grid,
            y=measured,
            x_label="temperature T",
            y_label="mean entropy (nats)",
        )
    ]
    if near_one := [t for t in grid if entropy_theory(params.keys, sqrt_dk / t) is not None]:
        series.append(
            Series(
                name="ln(keys) − d_k / (2T²)",
                kind="line",
                x=near_one,
                y=[math.log(params.keys) - params.d_k / (2 * t * t) for t in near_one],
                x_label="temperature T",
                y_label="mean entropy (nats)",
            )
        )
    return Outcome(
        outputs={
            "mean_entropy": mean_entropy(raw, params.temperature),
            "entropy_at_sqrt_dk": mean_entropy(raw, sqrt_dk),
            "entropy_unscaled": mean_entropy(raw, 1.0),
            "max_entropy": math.log(params.keys),
            "logit_std": raw.std().item() / params.temperature,
            "sqrt_dk": sqrt_dk,
        },
        theory=theory,
        series=series,
        notes=[ENTROPY_NOTE],
    )


SOFTMAX_SATURATION = Demo(spec=spec.SOFTMAX_SATURATION, compute=compute_saturation)

TEMPERATURE = Demo(spec=spec.TEMPERATURE, compute=compute_temperature)

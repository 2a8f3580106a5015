"""``ab_sample_size``: users per arm for a two-proportion A/B test, checked by simulation.

The two-sided z-test of two independent proportions uses the pooled rate under
the null, so its threshold on p̂₂ − p̂₁ is z_(1−α/2)·σ₀/√n with
σ₀ = sqrt(2p̄(1 − p̄)), p̄ = (p₁ + p₂)/2; under the alternative the difference
has spread σ₁/√n, σ₁ = sqrt(p₁(1 − p₁) + p₂(1 − p₂)). Ignoring the far tail,
power 1 − β needs δ√n = z_(1−α/2)·σ₀ + z_(1−β)·σ₁ with δ = p₂ − p₁: statsmodels'
``normal_sample_size_one_tail`` with α/2, as its
``samplesize_proportions_2indep_onetail`` calls it.

The check: ``simulations`` A/B tests at that n (conversions drawn with
``torch.binomial``), each analysed with the same pooled z-test; the share that
rejects is the measured power, and the same with both arms at p₁ (A/A tests)
the measured false-positive rate.
"""

import math

import torch
from scipy.stats import norm  # type: ignore[import-untyped]

from app.demos.specs import evaluation_ab_sample_size as spec
from app.demos.specs.evaluation_ab_sample_size import AbSampleSizeParams, treatment_rate
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

SIZE_FACTORS = (0.25, 0.5, 1.0, 1.5, 2.0)
"""Multiples of n_per_arm where the simulated tests run (1.0 gives the headline numbers)."""
CURVE_POINTS = 41


def spreads(p1: float, p2: float) -> tuple[float, float]:
    """σ₀ (pooled, under the null) and σ₁ (under the alternative) of one user's difference.

    Example:
        >>> [round(s, 4) for s in spreads(0.10, 0.20)]   # close, not equal
        [0.505, 0.5]
    """
    p_bar = (p1 + p2) / 2
    return math.sqrt(2 * p_bar * (1 - p_bar)), math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))


def sample_size(p1: float, p2: float, alpha: float, power: float) -> float:
    """Users per arm, unrounded: ((z_(1−α/2)·σ₀ + z_(1−β)·σ₁) / (p₂ − p₁))².

    Example:
        >>> math.ceil(sample_size(0.10, 0.11, 0.05, 0.8))
        14751
    """
    sd_null, sd_alt = spreads(p1, p2)
    z_alpha, z_power = float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))
    return ((z_alpha * sd_null + z_power * sd_alt) / (p2 - p1)) ** 2


def normal_power(n: float, p1: float, p2: float, alpha: float) -> float:
    """Power of the two-sided pooled z-test with n users per arm, both tails counted.

    Example:
        >>> round(normal_power(14751, 0.10, 0.11, 0.05), 4)
        0.8
    """
    sd_null, sd_alt = spreads(p1, p2)
    z_alpha, shift = float(norm.ppf(1 - alpha / 2)), abs(p2 - p1) * math.sqrt(n)
    upper = norm.cdf((shift - z_alpha * sd_null) / sd_alt)
    lower = norm.cdf((-shift - z_alpha * sd_null) / sd_alt)
    return float(upper + lower)


def rejection_rate(
    n: int, p1: float, p2: float, alpha: float, simulations: int, generator: torch.Generator
) -> float:
    """Share of simulated tests (n users per arm) whose pooled z-test gives p < α."""
    device = generator.device
    counts = torch.full((simulations,), float(n), dtype=torch.float64, device=device)
    conv_a = torch.binomial(counts, torch.full_like(counts, p1), generator=generator)
    conv_b = torch.binomial(counts, torch.full_like(counts, p2), generator=generator)
    pooled = (conv_a + conv_b) / (2 * n)
    se = torch.sqrt(pooled * (1 - pooled) * 2 / n)
    z = torch.where(se > 0, (conv_b - conv_a) / n / se.clamp(min=1e-300), 0.0)
    p_values = 2 * torch.special.ndtr(-z.abs())
    return float((p_values < alpha).double().mean().item())


def compute(params: AbSampleSizeParams, device: torch.device) -> Outcome:
    """The formula's n, then simulated A/B and A/A tests at multiples of it."""
    generator = seeded(device, params.seed)
    p1 = params.baseline
    p2 = treatment_rate(p1, params.lift, params.lift_type)
    n = math.ceil(sample_size(p1, p2, params.alpha, params.power))
    half = treatment_rate(p1, params.lift / 2, params.lift_type)
    n_half = math.ceil(sample_size(p1, half, params.alpha, params.power))
    sizes = [max(1, round(n * factor)) for factor in SIZE_FACTORS]
    measured = [
        rejection_rate(size, p1, p2, params.alpha, params.simulations, generator) for size in sizes
    ]
    null = [
        rejection_rate(size, p1, p1, params.alpha, params.simulations, generator) for size in sizes
    ]
    at_n = SIZE_FACTORS.index(1.0)
    power = measured[at_n]
    formula_power = normal_power(n, p1, p2, params.alpha)
    return Outcome(
        outputs={
            "n_per_arm": float(n),
            "n_half_lift": float(n_half),
            "half_lift_ratio": n_half / n,
            "treatment_rate": p2,
            "absolute_lift": p2 - p1,
            "z_alpha": float(norm.ppf(1 - params.alpha / 2)),
            "z_power": float(norm.ppf(params.power)),
            "power_formula": formula_power,
            "power_measured": power,
            "false_positive_rate": null[at_n],
            "power_standard_error": math.sqrt(power * (1 - power) / params.simulations),
        },
        theory={
            "power_measured": formula_power,
            "false_positive_rate": params.alpha,
        },
        series=[
            *_power_curves(params, p2, n, sizes, measured, null),
            _size_against_lift(params),
        ],
        notes=NOTES,
    )


NOTES = [
    "Theory for the measured power: the normal approximation at n_per_arm, which the rounding "
    "up puts at or a little above the power asked for. For the false-positive rate: α.",
    "The simulated tests use the same pooled two-sided z-test the formula assumes; with few "
    "expected conversions per arm the normal approximation, and so the formula, can be off.",
]


def _power_curves(
    params: AbSampleSizeParams,
    p2: float,
    n: int,
    sizes: list[int],
    measured: list[float],
    null: list[float],
) -> list[Series]:
    """Rejection rate against users per arm: formula power, simulated power and A/A rate, α."""
    low, high = max(1.0, n / 8), n * 4.0
    grid = [low * (high / low) ** (i / (CURVE_POINTS - 1)) for i in range(CURVE_POINTS)]
    simulated = [float(size) for size in sizes]
    curves = [
        (
            "power (normal approximation)",
            grid,
            [normal_power(size, params.baseline, p2, params.alpha) for size in grid],
        ),
        ("power (simulated)", simulated, measured),
        ("false positives (simulated A/A)", simulated, null),
        ("α", [low, high], [params.alpha, params.alpha]),
    ]
    return [
        Series(
            name=name,
            kind="line",
            x=x,
            y=y,
            x_label="users per arm",
            y_label="share of tests rejecting the null",
        )
        for name, x, y in curves
    ]


def _size_against_lift(params: AbSampleSizeParams) -> Series:
    """Users per arm for 1/4 to 2 times the lift, as far as the treatment rate stays below 1."""
    lifts, sizes = [], []
    for factor in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
        p2 = treatment_rate(params.baseline, params.lift * factor, params.lift_type)
        if p2 < 0.999:
            lifts.append(p2 - params.baseline)
            sizes.append(sample_size(params.baseline, p2, params.alpha, params.power))
    return Series(
        name="users per arm",
        kind="line",
        x=lifts,
        y=sizes,
        x_label="absolute lift δ",
        y_label="users per arm",
    )


# --- the demo -----------------------------------------------------------------------------------

AB_SAMPLE_SIZE = Demo(spec=spec.AB_SAMPLE_SIZE, compute=compute)

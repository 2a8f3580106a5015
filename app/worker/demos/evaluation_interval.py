"""``eval_interval``: the error bar of an eval score, and of the gap between two models.

An eval of n independent items scored 0/1 estimates the accuracy p with
standard error sqrt(p(1 − p)/n) (Miller 2024, §2.1), so a 95% interval is
p̂ ± 1.96·SE (Wald). The Wilson score interval (Wilson 1927) inverts the same
normal test and behaves better near 0, 1 and at small n (Brown, Cai &
DasGupta 2001). A percentile bootstrap resamples the items. Two models on the
same items differ by a mean of per-item differences; its standard error is
sqrt((Var(a) + Var(b) − 2·Cov(a, b))/n), smaller than the unpaired
sqrt(SE_a² + SE_b²) when the models agree on which items are hard (Miller 2024,
§4). Coverage is measured over simulated eval sets and computed exactly from the
binomial distribution.
"""

import math
from statistics import NormalDist

import torch

from app.demos.specs import evaluation_interval as spec
from app.demos.specs.evaluation_interval import EvalIntervalParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import histogram
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

POWER = 0.8
Z_POWER = NormalDist().inv_cdf(POWER)
"""Power assumed by ``items_needed`` (Miller 2024, §5 uses 80%)."""
COVERAGE_ITEMS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)


def z_value(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 95%.

    Example:
        >>> round(z_value(0.95), 4)
        1.96
    """
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wald(successes: torch.Tensor, n: int, z: float) -> tuple[torch.Tensor, torch.Tensor]:
    """p̂ ± z·sqrt(p̂(1 − p̂)/n)."""
    p = successes / n
    half = z * torch.sqrt(p * (1 - p) / n)
    return p - half, p + half


def wilson(successes: torch.Tensor, n: int, z: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Wilson's score interval: centre (2np̂ + z²)/(2(n + z²)), half z·sqrt(4np̂q̂ + z²)/(2(n + z²)).

    Example:
        >>> low, high = wilson(torch.tensor([7.0], dtype=torch.float64), 50, z_value(0.95))
        >>> round(low.item(), 4), round(high.item(), 4)
        (0.0695, 0.2619)
    """
    p = successes / n
    denominator = 2 * (n + z * z)
    centre = (2 * n * p + z * z) / denominator
    half = z / denominator * torch.sqrt(4 * n * p * (1 - p) + z * z)
    return centre - half, centre + half


def exact_coverage(p: float, n: int, z: float) -> tuple[float, float]:
    """P(p inside the interval) for the Wald and Wilson intervals, summed over Binomial(n, p).

    Example:
        >>> [round(c, 4) for c in exact_coverage(0.95, 20, z_value(0.95))]
        [0.6389, 0.9245]
    """
    k = torch.arange(n + 1, dtype=torch.float64)
    log_pmf = (
        math.lgamma(n + 1)
        - torch.lgamma(k + 1)
        - torch.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    pmf = log_pmf.exp()
    coverages = []
    for interval in (wald, wilson):
        low, high = interval(k, n, z)
        coverages.append((pmf * ((low <= p) & (p <= high))).sum().item())
    return coverages[0], coverages[1]


def cell_probabilities(a: float, b: float, correlation: float) -> list[float]:
    """P(A right, B right), P(A right, B wrong), P(A wrong, B right), P(both wrong)."""
    both = a * b + correlation * math.sqrt(a * (1 - a) * b * (1 - b))
    cells = [both, a - both, b - both, 1 - a - b + both]
    return [max(0.0, cell) for cell in cells]  # clip rounding below 0 at the extremes


def compute(params: EvalIntervalParams, device: torch.device) -> Outcome:
    """Score one simulated eval set for two models, resample it, and measure coverage."""
    generator = seeded(device, params.seed)
    n, z = params.items, z_value(params.confidence)
    a, b = params.accuracy_a, params.accuracy_b
    cells = torch.tensor(
        cell_probabilities(a, b, params.correlation), dtype=torch.float64, device=device
    )
    cell = torch.multinomial(cells, n, replacement=True, generator=generator)
    score_a = (cell <= 1).double()  # cells 0 and 1: A right
    score_b = ((cell == 0) | (cell == 2)).double()  # cells 0 and 2: B right
    diff = score_a - score_b

    accuracy_a, accuracy_b = score_a.mean().item(), score_b.mean().item()
    se_a = math.sqrt(accuracy_a * (1 - accuracy_a) / n)
    se_b = math.sqrt(accuracy_b * (1 - accuracy_b) / n)
    se_paired = math.sqrt(diff.var().item() / n)
    successes = score_a.sum().reshape(1)
    wald_low, wald_high = wald(successes, n, z)
    wilson_low, wilson_high = wilson(successes, n, z)

    boot_a, boot_diff = _bootstrap(score_a, diff, params.resamples, generator)
    tails = torch.tensor([(1 - params.confidence) / 2, (1 + params.confidence) / 2]).to(
        device, torch.float64
    )
    boot_low, boot_high = torch.quantile(boot_a, tails).tolist()
    boot_diff_low, boot_diff_high = torch.quantile(boot_diff, tails).tolist()

    covered = _simulated_coverage(params.trials, n, a, z, generator)
    exact_wald, exact_wilson = exact_coverage(a, n, z)

    var_a, var_b = a * (1 - a), b * (1 - b)
    covariance = params.correlation * math.sqrt(var_a * var_b)
    var_diff = var_a + var_b - 2 * covariance
    difference = accuracy_a - accuracy_b
    outputs = {
        "accuracy_a": accuracy_a,
        "accuracy_b": accuracy_b,
        "standard_error": se_a,
        "half_width": z * se_a,
        "wald_low": wald_low.item(),
        "wald_high": wald_high.item(),
        "wilson_low": wilson_low.item(),
        "wilson_high": wilson_high.item(),
        "bootstrap_low": boot_low,
        "bootstrap_high": boot_high,
        "bootstrap_half_width": (boot_high - boot_low) / 2,
        "difference": difference,
        "difference_se_unpaired": math.sqrt(se_a**2 + se_b**2),
        "difference_se_paired": se_paired,
        "difference_low": difference - z * se_paired,
        "difference_high": difference + z * se_paired,
        "bootstrap_difference_low": boot_diff_low,
        "bootstrap_difference_high": boot_diff_high,
        "wald_coverage": covered[0],
        "wilson_coverage": covered[1],
    }
    if a != b:  # questions for a paired test to detect the true gap
        outputs["items_needed"] = (z + Z_POWER) ** 2 * var_diff / (a - b) ** 2
    return Outcome(
        outputs=outputs,
        theory={
            "accuracy_a": a,
            "accuracy_b": b,
            **_theory_spread(var_a, var_b, var_diff, n, z),
            "difference": a - b,
            "wald_coverage": exact_wald,
            "wilson_coverage": exact_wilson,
        },
        series=[
            *histogram(
                boot_a - accuracy_a,
                name="bootstrap accuracy − observed",
                x_label="resampled accuracy of A − observed accuracy",
                normal_variance=se_a**2 if se_a > 0 else None,
            ),
            *_coverage_curves(a, z),
        ],
        notes=NOTES,
    )


NOTES = [
    "Wald, Wilson and bootstrap intervals are for model A; the difference is A − B on "
    "the same items, with the paired standard error.",
    f"items_needed: questions for a paired test at 1 − confidence significance and "
    f"{POWER:.0%} power to detect the true gap (Miller 2024, §5).",
]


def _simulated_coverage(
    trials: int, n: int, a: float, z: float, generator: torch.Generator
) -> list[float]:
    """How often the Wald and the Wilson interval cover a, over simulated eval sets."""
    device = generator.device
    counts = torch.binomial(
        torch.full((trials,), float(n), dtype=torch.float64, device=device),
        torch.full((trials,), a, dtype=torch.float64, device=device),
        generator=generator,
    )
    covered = []
    for interval in (wald, wilson):
        low, high = interval(counts, n, z)
        covered.append(((low <= a) & (a <= high)).double().mean().item())
    return covered


def _theory_spread(
    var_a: float, var_b: float, var_diff: float, n: int, z: float
) -> dict[str, float]:
    """Standard errors and half-widths by formula."""
    return {
        "standard_error": math.sqrt(var_a / n),
        "half_width": z * math.sqrt(var_a / n),
        "bootstrap_half_width": z * math.sqrt(var_a / n),
        "difference_se_unpaired": math.sqrt((var_a + var_b) / n),
        "difference_se_paired": math.sqrt(var_diff / n),
    }


def _bootstrap(
    score_a: torch.Tensor, diff: torch.Tensor, resamples: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Means of A's score and of A − B over resampled item sets (the same items for both)."""
    n = score_a.numel()
    rows = max(1, 2**18 // n)
    boot_a, boot_diff = [], []
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        picks = torch.randint(n, (stop - start, n), generator=generator, device=score_a.device)
        boot_a.append(score_a[picks].mean(-1))
        boot_diff.append(diff[picks].mean(-1))
    return torch.cat(boot_a), torch.cat(boot_diff)


def _coverage_curves(p: float, z: float) -> list[Series]:
    """Exact coverage of the Wald and Wilson intervals against eval size, at accuracy p."""
    coverages = [exact_coverage(p, n, z) for n in COVERAGE_ITEMS]
    return [
        Series(
            name=name,
            kind="line",
            x=[float(n) for n in COVERAGE_ITEMS],
            y=[pair[index] for pair in coverages],
            x_label="items in the eval",
            y_label="coverage (exact)",
        )
        for index, name in enumerate(("Wald", "Wilson"))
    ]


# --- the demo -----------------------------------------------------------------------------------

EVAL_INTERVAL = Demo(spec=spec.EVAL_INTERVAL, compute=compute)

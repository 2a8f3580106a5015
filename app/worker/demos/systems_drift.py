"""``systems_drift``: PSI, KS and chi-square between a reference and a production sample.

The simulation: the reference (training) sample holds n draws from N(0, 1), the
production sample m draws from N(μ, σ²), and a third sample m draws from
N(0, 1) again, to show what the statistics read when nothing has drifted.

The population stability index bins both samples on edges taken from the
reference sample (its k/B quantiles, or B equal widths over its range, outer
bins open-ended) and sums (a − e)·ln(a/e) over the bins, e the reference's and
a the production's shares. Its population value uses the same edges with the
exact probability of each bin under each normal distribution, found by
numeric integration of the densities (``scipy.integrate.quad``): the value the
sample PSI tends to as both samples grow, so the difference is its sampling
bias. Since Σ (a − e)·ln(a/e) = KL(a‖e) + KL(e‖a), the PSI is the Jeffreys
(symmetrised KL) divergence of the binned shares; merging values into bins
cannot raise a KL divergence, so finer bins approach the Jeffreys divergence
of the two normals, given here in closed form.

The Kolmogorov–Smirnov test is ``scipy.stats.ks_2samp`` on the raw values; its
population value is sup |F − G| of the two normal CDFs. The chi-square test is
``scipy.stats.chi2_contingency`` on the 2 × B table of bin counts.
"""

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch
from scipy.integrate import quad  # type: ignore[import-untyped]
from scipy.optimize import minimize_scalar  # type: ignore[import-untyped]
from scipy.stats import chi2_contingency, ks_2samp, norm  # type: ignore[import-untyped]

from app.demos.specs import systems_drift as spec
from app.demos.specs.systems_drift import DriftParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- computation --------------------------------------------------------------------------------

SHIFT_GRID = [i / 10 for i in range(11)]
"""Mean shifts of the PSI-against-shift series, in reference standard deviations."""


@dataclass(frozen=True)
class Samples:
    """The three samples: reference, production, and a second draw from the reference."""

    reference: torch.Tensor
    production: torch.Tensor
    same: torch.Tensor
    noise: torch.Tensor  # the production sample's standard-normal draws, reused for the series


def simulate(params: DriftParams, device: torch.device) -> Samples:
    """n draws from N(0, 1), m from N(μ, σ²) and m more from N(0, 1), in fp64 on ``device``."""
    generator = seeded(device, params.seed)

    def draw(size: int) -> torch.Tensor:
        return torch.randn(size, generator=generator, dtype=torch.float64, device=device)

    reference = draw(params.reference_samples)
    noise = draw(params.production_samples)
    same = draw(params.production_samples)
    return Samples(reference, params.mean_shift + params.scale * noise, same, noise)


def bin_edges(reference: torch.Tensor, bins: int, binning: str) -> torch.Tensor:
    """The B − 1 inner edges from the reference sample; the outer bins are open-ended.

    Example:
        >>> bin_edges(torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0]), 4, "equal_width").tolist()
        [1.0, 2.0, 3.0]
    """
    steps = torch.arange(1, bins, dtype=torch.float64, device=reference.device) / bins
    if binning == "quantile":
        return torch.quantile(reference, steps)  # linear interpolation between order statistics
    low, high = reference.min(), reference.max()
    return low + (high - low) * steps


def bin_shares(values: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """Share of ``values`` in each bin (edges[i − 1], edges[i]]."""
    counts = torch.bincount(torch.bucketize(values, edges), minlength=edges.numel() + 1)
    return counts.double() / values.numel()


def psi(expected: torch.Tensor, actual: torch.Tensor, epsilon: float) -> float:
    """Σ (a − e)·ln(a/e) over the bins, shares below ``epsilon`` raised to it.

    Example:
        >>> e = torch.tensor([0.5, 0.5], dtype=torch.float64)
        >>> a = torch.tensor([0.6, 0.4], dtype=torch.float64)
        >>> round(psi(e, a, 1e-4), 6)   # 0.1·ln(1.2) + 0.1·ln(1.25)
        0.040547
    """
    e, a = expected.clamp(min=epsilon), actual.clamp(min=epsilon)
    return ((a - e) * (a / e).log()).sum().item()


def standard_density(z: float) -> float:
    """The N(0, 1) density; plain math, as quad calls it one point at a time (norm.pdf is slow)."""
    return math.exp(-0.5 * z * z) / SQRT_TAU


SQRT_TAU = math.sqrt(2 * math.pi)


def bin_probabilities(edges: list[float], mean: float, std: float) -> torch.Tensor:
    """Probability of each bin under N(mean, std²), by integrating the density (quad)."""
    bounds = [-math.inf, *edges, math.inf]
    return torch.tensor(
        [
            quad(standard_density, (low - mean) / std, (high - mean) / std, epsabs=1e-14)[0]
            for low, high in pairwise(bounds)
        ],
        dtype=torch.float64,
    )


def population_psi(edges: list[float], mean: float, std: float, epsilon: float) -> float:
    """PSI of N(mean, std²) against N(0, 1) on ``edges`` with exact bin probabilities."""
    return psi(bin_probabilities(edges, 0.0, 1.0), bin_probabilities(edges, mean, std), epsilon)


def jeffreys(mean: float, std: float) -> float:
    """KL(P‖Q) + KL(Q‖P) for P = N(0, 1) and Q = N(mean, std²); mean² when std is 1.

    Example:
        >>> jeffreys(0.5, 1.0)
        0.25
    """
    forward = math.log(std) + (1 + mean**2) / (2 * std**2) - 0.5  # KL(P‖Q)
    backward = -math.log(std) + (std**2 + mean**2) / 2 - 0.5  # KL(Q‖P)
    return forward + backward


def ks_distance(mean: float, std: float) -> float:
    """sup over x of |Φ(x) − Φ((x − mean)/std)|: a grid, then a bounded refinement."""

    def gap(x: float) -> float:
        return -abs(float(norm.cdf(x) - norm.cdf((x - mean) / std)))

    reach = 12 * max(1.0, std) + abs(mean)
    grid = np.linspace(-reach, reach, 4001)
    gaps = np.abs(norm.cdf(grid) - norm.cdf((grid - mean) / std))
    best = int(gaps.argmax())
    step = grid[1] - grid[0]
    refined = minimize_scalar(
        gap,
        bounds=(grid[best] - step, grid[best] + step),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(float(gaps[best]), -float(refined.fun))


def chi_square(expected: torch.Tensor, actual: torch.Tensor, n: int, m: int) -> tuple[float, float]:
    """Pearson's chi-square on the 2 × B count table, bins empty in both samples dropped."""
    table = np.stack([expected.cpu().numpy() * n, actual.cpu().numpy() * m]).round()
    table = table[:, table.sum(0) > 0]
    if table.shape[1] < 2:
        return 0.0, 1.0
    result = chi2_contingency(table, correction=False)
    return float(result.statistic), float(result.pvalue)


def compute(params: DriftParams, device: torch.device) -> Outcome:
    """Draw the samples, bin them on the reference's edges, and measure every statistic."""
    samples = simulate(params, device)
    edges = bin_edges(samples.reference, params.bins, params.binning)
    expected = bin_shares(samples.reference, edges)
    actual = bin_shares(samples.production, edges)
    edge_list = edges.tolist()
    n, m = params.reference_samples, params.production_samples
    reference = samples.reference.cpu().numpy()
    production = samples.production.cpu().numpy()
    ks = ks_2samp(reference, production)
    ks_same = ks_2samp(reference, samples.same.cpu().numpy())
    chi2_statistic, chi2_pvalue = chi_square(expected, actual, n, m)
    population = population_psi(edge_list, params.mean_shift, params.scale, params.epsilon)
    ks_population = ks_distance(params.mean_shift, params.scale)
    outputs = {
        "psi": psi(expected, actual, params.epsilon),
        "psi_population": population,
        "psi_same": psi(expected, bin_shares(samples.same, edges), params.epsilon),
        "jeffreys": jeffreys(params.mean_shift, params.scale),
        "ks_statistic": float(ks.statistic),
        "ks_pvalue": float(ks.pvalue),
        "ks_population": ks_population,
        "ks_same_pvalue": float(ks_same.pvalue),
        "chi2_statistic": chi2_statistic,
        "chi2_pvalue": chi2_pvalue,
        "empty_bins": float((actual == 0).sum().item()),
    }
    return Outcome(
        outputs=outputs,
        theory={
            "psi": population,
            "psi_same": noise_floor(params.bins, n, m),
            "ks_statistic": ks_population,
        },
        series=[*_share_bars(expected, actual), *_shift_series(params, samples, edges)],
        notes=NOTES,
    )


def noise_floor(bins: int, n: int, m: int) -> float:
    """(B − 1)(1/n + 1/m): the expected PSI of two samples of one distribution, for large n, m.

    For small share differences, (a − e)·ln(a/e) ≈ (a − e)²/p with p the bin's
    probability, and a − e has variance p(1 − p)(1/n + 1/m): the sum is a
    scaled chi-square with B − 1 degrees of freedom.
    """
    return (bins - 1) * (1 / n + 1 / m)


NOTES = [
    "The edges come from the reference sample; the production and same-distribution samples "
    "are binned on them, as a monitor bins today's data on the training data's edges.",
    "Theory for psi: the population PSI on the same edges. The sample PSI sits above it on "
    "average by about the noise floor (B − 1)(1/n + 1/m), the theory shown for psi_same.",
    "Theory for ks_statistic: sup |F − G| of the two normal CDFs; the sample value adds noise "
    "of order √(1/n + 1/m).",
]


def _share_bars(expected: torch.Tensor, actual: torch.Tensor) -> list[Series]:
    """Reference and production shares in each bin."""
    labels = [str(i + 1) for i in range(expected.numel())]
    return [
        Series(
            name=f"{name} share",
            kind="bar",
            x=labels,
            y=shares.tolist(),
            x_label="bin (reference edges)",
            y_label="share of the sample",
        )
        for name, shares in (("reference", expected), ("production", actual))
    ]


def _shift_series(params: DriftParams, samples: Samples, edges: torch.Tensor) -> list[Series]:
    """Sample PSI, population PSI and Jeffreys divergence against the mean shift at σ fixed."""
    expected = bin_shares(samples.reference, edges)
    edge_list = edges.tolist()
    sample, population, limit = [], [], []
    for shift in SHIFT_GRID:
        shifted = bin_shares(shift + params.scale * samples.noise, edges)
        sample.append(psi(expected, shifted, params.epsilon))
        population.append(population_psi(edge_list, shift, params.scale, params.epsilon))
        limit.append(jeffreys(shift, params.scale))
    return [
        Series(
            name=name,
            kind="line",
            x=SHIFT_GRID,
            y=values,
            x_label="mean shift (reference standard deviations)",
            y_label="PSI",
        )
        for name, values in (
            ("sample PSI", sample),
            ("population PSI", population),
            ("Jeffreys divergence", limit),
        )
    ]


# --- the demo -----------------------------------------------------------------------------------

DRIFT = Demo(spec=spec.DRIFT, compute=compute)

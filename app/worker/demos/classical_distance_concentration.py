"""``distance_concentration``: distances concentrate as the dimension grows.

Queries and points have d independent coordinates, N(0, 1) or U(0, 1).

Between two independent points, for Gaussian coordinates x − y ~ N(0, 2I),
so the distance is √2·χ_d: its mean is 2Γ((d+1)/2)/Γ(d/2) ≈ √(2d) and its
standard deviation over its mean is √(d − m²)/m with m = √2Γ((d+1)/2)/Γ(d/2),
about 1/√(2d). For uniform coordinates each (x_i − y_i)² has mean 1/6 and
variance 7/180, so the squared distance has mean d/6 and variance 7d/180, and
to first order the distance has mean √(d/6)·(1 − 7/(40d)) and relative spread
√(7/(20d)).

From one query the spread is smaller, because the query's own norm is shared by
all its distances: given q, the squared distance to a point has variance
2d + 4|q|² ≈ 6d about 2d (Gaussian), or d/30 about d/6 on average (uniform),
so the relative spread of one query's distances is r = c/√d with c = √(3/8) or
√(3/10). Treating those distances as normal, the farthest and nearest of n
points sit about a standard deviations either side of the mean, a = E[max of n
standard normals], so nearest / farthest ≈ (1 − a·r)/(1 + a·r) and the
relative contrast (farthest − nearest)/nearest ≈ 2a·r/(1 − a·r), both → 0 like
1/√d (Beyer et al. 1999: the nearest point approaches the farthest as the
dimension grows). The normal approximation needs a·r small: the demo states
these theories (and r itself, a large-d value) only where a·r ≤ 1/2.
"""

import math

import torch

from app.demos.specs import classical_distance_concentration as spec
from app.demos.specs.classical_distance_concentration import (
    MAX_COORDINATES,
    DistanceConcentrationParams,
)
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

SWEEP_DIMENSIONS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)
SWEEP_QUERIES = 20
"""Queries per dimension in the sweep (fewer than the main measurement: the trend is the point)."""
QUERY_SPREAD_FACTOR = {"gaussian": math.sqrt(3 / 8), "uniform": math.sqrt(3 / 10)}
NORMAL_REGIME = 0.5
"""Largest a·r at which the nearest/farthest theories are stated."""


def expected_max_normal(n: int) -> float:
    """E[max of n independent standard normals], by the trapezoid rule on [−12, 12].

    Example:
        >>> round(expected_max_normal(2), 4)   # 1/√π
        0.5642
    """
    x = torch.linspace(-12.0, 12.0, 48_001, dtype=torch.float64)
    density = torch.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    return float(torch.trapezoid(x * n * density * torch.special.ndtr(x) ** (n - 1), x))


def mean_distance(distribution: str, d: int) -> float:
    """Mean distance between two independent points: exact (Gaussian) or to O(1/d²) (uniform).

    Example:
        >>> round(mean_distance("gaussian", 1), 4)   # E|x − y| = 2/√π
        1.1284
    """
    if distribution == "gaussian":
        return 2 * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    return math.sqrt(d / 6) * (1 - 7 / (40 * d))


def relative_spread(distribution: str, d: int) -> float:
    """Standard deviation / mean of the distance between two independent points.

    Exact for Gaussian coordinates (√2·χ_d), first order in 1/d for uniform ones.

    Example:
        >>> round(relative_spread("gaussian", 10_000) * math.sqrt(2 * 10_000), 3)
        1.0
    """
    if distribution == "gaussian":
        m = math.sqrt(2) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
        return math.sqrt(max(d - m * m, 0.0)) / m
    return math.sqrt(7 / (20 * d))


def extremes_theory(distribution: str, d: int, n: int) -> tuple[float, float] | None:
    """Large-d (a·r, relative spread r of one query's distances), or None outside that regime."""
    r = QUERY_SPREAD_FACTOR[distribution] / math.sqrt(d)
    a = expected_max_normal(n)
    return (a * r, r) if a * r <= NORMAL_REGIME else None


def draw(
    generator: torch.Generator, rows: int, d: int, distribution: str, device: torch.device
) -> torch.Tensor:
    """``rows`` points with d independent N(0, 1) or U(0, 1) coordinates (fp64)."""
    if distribution == "gaussian":
        return torch.randn(rows, d, generator=generator, dtype=torch.float64, device=device)
    return torch.rand(rows, d, generator=generator, dtype=torch.float64, device=device)


def query_distances(
    params: DistanceConcentrationParams, device: torch.device, d: int, queries: int
) -> torch.Tensor:
    """Distances (queries × points) from independent queries to independent points."""
    generator = seeded(device, params.seed)
    query = draw(generator, queries, d, params.distribution, device)
    points = draw(generator, params.points, d, params.distribution, device)
    return torch.cdist(query, points)


def summarise(distances: torch.Tensor) -> dict[str, float]:
    """The outputs, measured from one distance matrix (one row per query)."""
    nearest = distances.amin(dim=1).clamp_min(torch.finfo(torch.float64).tiny)
    farthest = distances.amax(dim=1)
    return {
        "relative_contrast": float(((farthest - nearest) / nearest).mean()),
        "nearest_to_farthest": float((nearest / farthest).mean()),
        "nearest_distance": float(nearest.mean()),
        "farthest_distance": float(farthest.mean()),
        "mean_distance": float(distances.mean()),
        "relative_spread": float(distances.std() / distances.mean()),
        "query_spread": float((distances.std(dim=1) / distances.mean(dim=1)).mean()),
    }


def theory(distribution: str, d: int, n: int) -> dict[str, float]:
    """What the closed forms above predict for those outputs (the extremes only for large d)."""
    mean = mean_distance(distribution, d)
    predicted = {"mean_distance": mean, "relative_spread": relative_spread(distribution, d)}
    extremes = extremes_theory(distribution, d, n)
    if extremes is not None:
        ar, r = extremes
        predicted |= {
            "query_spread": r,
            "relative_contrast": 2 * ar / (1 - ar),
            "nearest_to_farthest": (1 - ar) / (1 + ar),
            "nearest_distance": mean * (1 - ar),
            "farthest_distance": mean * (1 + ar),
        }
    return predicted


def compute(params: DistanceConcentrationParams, device: torch.device) -> Outcome:
    """Distances from the queries to the points, then the same at every dimension of a sweep."""
    distances = query_distances(params, device, params.dimensions, params.queries)
    return Outcome(
        outputs=summarise(distances),
        theory=theory(params.distribution, params.dimensions, params.points),
        series=_sweep(params, device),
        notes=[
            "Theory: exact mean and spread of distances for Gaussian coordinates, first order "
            "in 1/d for uniform ones; one query's spread r and its nearest and farthest "
            "distances are large-d approximations, given only where a·r ≤ 1/2 (a = E[max of "
            "n standard normals]).",
            "The relative spread of one query's distances (query_spread) is below that of all "
            "distances (relative_spread): a query's own norm is shared by all its distances.",
        ],
    )


def _sweep(params: DistanceConcentrationParams, device: torch.device) -> list[Series]:
    """Nearest / farthest and the relative spread against d, measured and predicted."""
    dims = [d for d in SWEEP_DIMENSIONS if d * params.points <= MAX_COORDINATES]
    queries = min(params.queries, SWEEP_QUERIES)
    measured = [summarise(query_distances(params, device, d, queries)) for d in dims]
    predicted = [theory(params.distribution, d, params.points) for d in dims]
    in_regime = [i for i, p in enumerate(predicted) if "nearest_to_farthest" in p]
    x = [float(d) for d in dims]
    return [
        Series(
            name="nearest / farthest, measured",
            kind="line",
            x=x,
            y=[m["nearest_to_farthest"] for m in measured],
            x_label="dimensions d",
            y_label="nearest / farthest distance",
        ),
        Series(
            name="nearest / farthest, theory (large d)",
            kind="line",
            x=[x[i] for i in in_regime],
            y=[predicted[i]["nearest_to_farthest"] for i in in_regime],
            x_label="dimensions d",
            y_label="nearest / farthest distance",
        ),
        Series(
            name="std / mean of distances, measured",
            kind="line",
            x=x,
            y=[m["relative_spread"] for m in measured],
            x_label="dimensions d",
            y_label="std / mean of distances",
        ),
        Series(
            name="std / mean of distances, theory",
            kind="line",
            x=x,
            y=[p["relative_spread"] for p in predicted],
            x_label="dimensions d",
            y_label="std / mean of distances",
        ),
    ]


DISTANCE_CONCENTRATION = Demo(spec=spec.DISTANCE_CONCENTRATION, compute=compute)

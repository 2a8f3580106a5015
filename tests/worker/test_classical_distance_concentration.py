"""distance_concentration: torch's distances against SciPy's, the closed forms against SciPy's χ.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.integrate import quad
from scipy.spatial.distance import cdist
from scipy.stats import chi, norm

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_distance_concentration import (
    expected_max_normal,
    mean_distance,
    query_distances,
    relative_spread,
)
from tests.worker.conftest import RunDemo


@pytest.mark.parametrize("distribution", ["gaussian", "uniform"])
@pytest.mark.parametrize("dimensions", [1, 30, 2000])
def test_torch_distances_match_scipy_and_the_outputs_a_hand_summary(
    cpu: torch.device, run: RunDemo, distribution: str, dimensions: int
) -> None:
    raw = {"dimensions": dimensions, "points": 300, "queries": 7, "distribution": distribution}
    params = get_demo("distance_concentration").validate(raw)
    generator = torch.Generator().manual_seed(params.seed)
    draw = torch.randn if distribution == "gaussian" else torch.rand
    queries = draw(7, dimensions, generator=generator, dtype=torch.float64).numpy()
    points = draw(300, dimensions, generator=generator, dtype=torch.float64).numpy()
    expected = cdist(queries, points)
    assert query_distances(params, cpu, dimensions, 7).numpy() == pytest.approx(expected, rel=1e-9)
    nearest, farthest = expected.min(axis=1), expected.max(axis=1)
    outputs = run("distance_concentration", **raw).outputs
    assert outputs["relative_contrast"] == pytest.approx(
        np.mean((farthest - nearest) / nearest), rel=1e-6
    )
    assert outputs["nearest_to_farthest"] == pytest.approx(np.mean(nearest / farthest), rel=1e-6)
    assert outputs["relative_spread"] == pytest.approx(
        expected.std(ddof=1) / expected.mean(), rel=1e-6
    )


@pytest.mark.parametrize("d", [1, 2, 7, 100, 5000])
def test_gaussian_closed_forms_are_sqrt2_chi(d: int) -> None:
    # x − y ~ N(0, 2I), so |x − y| = √2·χ_d.
    assert mean_distance("gaussian", d) == pytest.approx(math.sqrt(2) * chi(d).mean(), rel=1e-9)
    assert relative_spread("gaussian", d) == pytest.approx(chi(d).std() / chi(d).mean(), rel=1e-7)
    assert relative_spread("gaussian", d) * math.sqrt(2 * d) == pytest.approx(1.0, abs=0.5 / d)


def test_uniform_closed_forms_against_a_large_simulation() -> None:
    # First order in 1/d: at d = 200 the mean is within 0.01% and the spread within 1%.
    generator = torch.Generator().manual_seed(3)
    x, y = (torch.rand(200_000, 200, generator=generator, dtype=torch.float64) for _ in range(2))
    distances = (x - y).norm(dim=1)
    assert float(distances.mean()) == pytest.approx(mean_distance("uniform", 200), rel=2e-4)
    assert float(distances.std() / distances.mean()) == pytest.approx(
        relative_spread("uniform", 200), rel=0.01
    )


@pytest.mark.parametrize("n", [2, 3, 10, 1000, 10_000])
def test_expected_maximum_of_normals_matches_quadrature(n: int) -> None:
    expected, _ = quad(lambda x: x * n * norm.pdf(x) * norm.cdf(x) ** (n - 1), -12, 12, limit=200)
    assert expected_max_normal(n) == pytest.approx(expected, abs=1e-6)


# Over 30 seeds (1,000 points, 100 queries): Gaussian, d 100: contrast 0.481-0.508 (theory
# 0.495), nearest/farthest 0.664-0.676 (0.669), spread 0.0673-0.0734 (0.0708), mean
# distance 13.98-14.21 (14.11); d 1000: contrast 0.131-0.139 (0.134), nearest/farthest
# 0.878-0.884 (0.882). Uniform, d 100: contrast 0.423-0.446 (0.432), nearest/farthest
# 0.692-0.703 (0.698), one query's spread 0.0545-0.0554 (0.0548).
@pytest.mark.parametrize(
    ("params", "output", "tolerance"),
    [
        ({}, "relative_contrast", 0.04),
        ({}, "nearest_to_farthest", 0.025),
        ({}, "relative_spread", 0.005),
        ({}, "mean_distance", 0.3),
        ({"dimensions": 1000, "points": 1000}, "relative_contrast", 0.012),
        ({"dimensions": 1000, "points": 1000}, "nearest_to_farthest", 0.012),
        ({"distribution": "uniform"}, "relative_contrast", 0.04),
        ({"distribution": "uniform"}, "nearest_to_farthest", 0.02),
        ({"distribution": "uniform"}, "query_spread", 0.003),
    ],
)
def test_measured_near_theory(
    run: RunDemo, params: dict[str, object], output: str, tolerance: float
) -> None:
    result = run("distance_concentration", **params)
    assert result.outputs[output] == pytest.approx(result.theory[output], abs=tolerance)


def test_contrast_falls_like_one_over_sqrt_d(run: RunDemo) -> None:
    low = run("distance_concentration", dimensions=100)
    high = run("distance_concentration", dimensions=1600)
    # 16 times the dimensions: a quarter of the contrast, and a little less (the 1 − a·r
    # in the denominator): 4 × 0.950 / 0.802 = 4.74.
    expected = low.theory["relative_contrast"] / high.theory["relative_contrast"]
    assert expected == pytest.approx(4.74, abs=0.01)
    measured = low.outputs["relative_contrast"] / high.outputs["relative_contrast"]
    assert measured == pytest.approx(expected, rel=0.1)


def test_low_dimensions_have_no_large_d_theory(run: RunDemo) -> None:
    result = run("distance_concentration", dimensions=2)
    assert "relative_contrast" not in result.theory and "query_spread" not in result.theory
    assert result.theory["mean_distance"] == pytest.approx(math.sqrt(math.pi), rel=1e-9)
    assert result.outputs["relative_contrast"] > 10  # the nearest point is far nearer


def test_one_querys_spread_is_below_the_pairwise_spread(run: RunDemo) -> None:
    outputs = run("distance_concentration", dimensions=400, points=2000).outputs
    # √(3/8) against 1/√2 at large d: the query's own norm is shared by its distances.
    # Over 30 seeds the ratio was 0.83-0.90 (theory 0.866).
    ratio = outputs["query_spread"] / outputs["relative_spread"]
    assert ratio == pytest.approx(math.sqrt(3 / 8) * math.sqrt(2), abs=0.05)


def test_sweep_nearest_over_farthest_rises_towards_one(run: RunDemo) -> None:
    series = {s.name: s for s in run("distance_concentration").series}
    measured = series["nearest / farthest, measured"]
    assert measured.x[0] == 1 and measured.x[-1] == 2000  # 1,000 points × d ≤ 2²²
    assert measured.y[-1] > 0.9 > 0.1 > measured.y[0]
    assert measured.y == sorted(measured.y)


def test_budgets_name_what_to_lower(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("distance_concentration").validate({"dimensions": 10_000})
    [problem] = caught.value.problems
    assert problem.param == "points"
    assert problem.message.endswith("lower points to 419 or less")
    response = client.post(
        "/demos/distance_concentration", json={"dimensions": 300, "points": 10_000}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["message"].endswith("lower queries to 89 or less")

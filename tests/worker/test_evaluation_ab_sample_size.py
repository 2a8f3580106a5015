"""ab_sample_size: the formula against a hand-written one, the simulation against exact sums.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math
from statistics import NormalDist

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy.stats import binom

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.evaluation_ab_sample_size import normal_power, sample_size
from tests.worker.conftest import RunDemo


def n_by_hand(p1: float, p2: float, alpha: float, power: float) -> int:
    """The same formula with the standard library's normal quantiles (no SciPy)."""
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    p_bar = (p1 + p2) / 2
    sd_null = math.sqrt(2 * p_bar * (1 - p_bar))
    sd_alt = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(((z_a * sd_null + z_b * sd_alt) / (p2 - p1)) ** 2)


def exact_rejection(n: int, p1: float, p2: float, alpha: float) -> float:
    """P(the pooled two-sided z-test rejects), summed over both arms' binomial outcomes."""
    z = NormalDist().inv_cdf(1 - alpha / 2)

    def support(p: float) -> tuple[np.ndarray, np.ndarray]:
        low, high = binom.ppf(1e-12, n, p), binom.isf(1e-12, n, p)
        k = np.arange(max(0.0, low - 1), min(n, high + 1) + 1)
        return k, binom.pmf(k, n, p)

    a, pmf_a = support(p1)
    b, pmf_b = support(p2)
    conv_a, conv_b = np.meshgrid(a, b, indexing="ij")
    pooled = (conv_a + conv_b) / (2 * n)
    se = np.sqrt(pooled * (1 - pooled) * 2 / n)
    stat = np.divide(np.abs(conv_b - conv_a) / n, se, out=np.zeros_like(se), where=se > 0)
    return float(pmf_a @ (stat > z).astype(float) @ pmf_b)


# The card's table: 10% baseline with 5%, 10% and 20% relative lifts, and 2% with 10%.
@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, 14_751),
        ({"lift": 0.05}, 57_763),
        ({"lift": 0.2}, 3_841),
        ({"baseline": 0.02}, 80_682),
        ({"lift": 0.01, "lift_type": "absolute"}, 14_751),
        ({"baseline": 0.3, "lift": 0.05, "lift_type": "absolute", "alpha": 0.01, "power": 0.9}, 0),
    ],
)
def test_n_per_arm_matches_a_hand_written_formula(
    run: RunDemo, params: dict[str, float], expected: int
) -> None:
    result = run("ab_sample_size", simulations=1000, **params)
    p1, p2 = params.get("baseline", 0.1), result.outputs["treatment_rate"]
    by_hand = n_by_hand(p1, p2, params.get("alpha", 0.05), params.get("power", 0.8))
    assert result.outputs["n_per_arm"] == by_hand
    if expected:
        assert by_hand == expected


@pytest.mark.parametrize(("p1", "p2"), [(0.1, 0.11), (0.02, 0.022), (0.5, 0.55), (0.01, 0.03)])
def test_n_is_the_smallest_size_whose_power_reaches_the_target(p1: float, p2: float) -> None:
    n = math.ceil(sample_size(p1, p2, 0.05, 0.8))
    assert normal_power(n, p1, p2, 0.05) >= 0.8
    assert normal_power(n - 1, p1, p2, 0.05) < 0.8


@pytest.mark.parametrize(
    ("params", "n", "p2"),
    [({}, 14_751, 0.11), ({"lift": 0.2}, 3_841, 0.12), ({"baseline": 0.02}, 80_682, 0.022)],
)
def test_simulated_power_and_alpha_match_exact_binomial_sums(
    run: RunDemo, params: dict[str, float], n: int, p2: float
) -> None:
    result = run("ab_sample_size", **params, seed=3)
    p1 = params.get("baseline", 0.1)
    exact_power, exact_alpha = exact_rejection(n, p1, p2, 0.05), exact_rejection(n, p1, p1, 0.05)
    assert exact_power == pytest.approx(0.8, abs=0.003)  # the normal approximation holds here
    assert exact_alpha == pytest.approx(0.05, abs=0.002)
    standard_error = result.outputs["power_standard_error"]
    assert result.outputs["power_measured"] == pytest.approx(exact_power, abs=4 * standard_error)
    alpha_se = math.sqrt(exact_alpha * (1 - exact_alpha) / 20_000)
    assert result.outputs["false_positive_rate"] == pytest.approx(exact_alpha, abs=4 * alpha_se)


def test_tiny_samples_are_where_the_formula_is_off(run: RunDemo) -> None:
    # p 0.5 -> 0.995 needs 11 users per arm: exact power 0.866, the formula says 0.807.
    result = run("ab_sample_size", baseline=0.5, lift=0.99, simulations=100_000)
    assert result.outputs["n_per_arm"] == 11
    exact = exact_rejection(11, 0.5, 0.995, 0.05)
    assert exact == pytest.approx(0.866, abs=0.001)
    assert result.outputs["power_measured"] == pytest.approx(exact, abs=0.005)
    assert result.theory["power_measured"] == pytest.approx(0.807, abs=0.001)


# Card claims at the defaults. Over 30 seeds (20,000 tests each): power 0.791-0.810,
# false-positive rate 0.0456-0.0524.
@pytest.mark.parametrize(
    ("output", "expected", "tolerance"),
    [
        ("power_measured", 0.80, 0.012),
        ("false_positive_rate", 0.05, 0.006),
        ("n_half_lift", 57_763, 0),
        ("half_lift_ratio", 3.92, 0.005),
        ("z_alpha", 1.960, 0.0005),
        ("z_power", 0.842, 0.0005),
    ],
)
def test_card_claims(run: RunDemo, output: str, expected: float, tolerance: float) -> None:
    assert run("ab_sample_size").outputs[output] == pytest.approx(expected, abs=tolerance)


def test_halving_a_small_lift_needs_four_times_the_users(run: RunDemo) -> None:
    result = run("ab_sample_size", baseline=0.3, lift=0.001, simulations=1000)
    assert result.outputs["half_lift_ratio"] == pytest.approx(4.0, abs=0.01)


def test_series(run: RunDemo) -> None:
    series = {s.name: s for s in run("ab_sample_size", simulations=2000).series}
    formula = series["power (normal approximation)"].y
    assert formula == sorted(formula)  # power grows with the sample size
    assert series["power (simulated)"].x[2] == 14_751
    sizes = series["users per arm"].y
    assert sizes == sorted(sizes, reverse=True)  # bigger lifts need fewer users


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("ab_sample_size").validate({"baseline": 0.95})  # 10% relative: p2 = 1.045
    [problem] = caught.value.problems
    assert problem.param == "lift"
    assert problem.message == (
        "lift must keep the treatment rate p₂ below 0.999, got p₂ = 1.045 for baseline 0.95 "
        "and a relative lift of 0.1: lower lift below 0.051579"
    )
    response = client.post("/demos/ab_sample_size", json={"simulations": 10_000_000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "simulations"

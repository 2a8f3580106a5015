"""systems_drift: PSI, KS and chi-square against plain-Python loops, SciPy and closed forms.

Tolerances of the card claims come from 100 seeds at each setting (docs/demos.md):
each is wider than the spread seen there.
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.integrate import quad
from scipy.special import rel_entr
from scipy.stats import binomtest, chi2, norm

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.systems_drift import (
    bin_probabilities,
    bin_shares,
    jeffreys,
    ks_distance,
    noise_floor,
    population_psi,
    psi,
    simulate,
)
from tests.worker.conftest import RunDemo


def shares_by_hand(values: list[float], edges: list[float]) -> list[float]:
    """Share of the values in each bin (edges[i − 1], edges[i]], outer bins open-ended."""
    counts = [0] * (len(edges) + 1)
    for value in values:
        index = 0
        while index < len(edges) and value > edges[index]:
            index += 1
        counts[index] += 1
    return [count / len(values) for count in counts]


def psi_by_hand(expected: list[float], actual: list[float], epsilon: float) -> float:
    """Σ (a − e)·ln(a/e), one bin at a time, shares below ε raised to ε."""
    total = 0.0
    for e, a in zip(expected, actual, strict=True):
        e, a = max(e, epsilon), max(a, epsilon)
        total += (a - e) * math.log(a / e)
    return total


def ks_by_hand(first: list[float], second: list[float]) -> float:
    """The largest gap between the two empirical CDFs, checked at every observed value."""
    gap = 0.0
    for x in first + second:
        below_first = sum(v <= x for v in first) / len(first)
        below_second = sum(v <= x for v in second) / len(second)
        gap = max(gap, abs(below_first - below_second))
    return gap


def samples_of(cpu: torch.device, **params: object) -> tuple[list[float], list[float], list[float]]:
    """Reference, production and same-distribution samples as the demo draws them."""
    drawn = simulate(get_demo("systems_drift").validate(params), cpu)
    return drawn.reference.tolist(), drawn.production.tolist(), drawn.same.tolist()


def test_psi_matches_a_plain_python_loop_on_hand_made_bins() -> None:
    reference = [-1.5, -0.7, -0.2, 0.1, 0.4, 0.9, 1.3, 2.2]
    production = [-0.4, 0.3, 0.5, 0.8, 1.1, 1.6, 2.5, 3.0]
    edges = [-0.5, 0.5, 1.5]  # bins (-inf, -0.5], (-0.5, 0.5], (0.5, 1.5], (1.5, inf)
    expected, actual = shares_by_hand(reference, edges), shares_by_hand(production, edges)
    assert expected == [0.25, 0.375, 0.25, 0.125]
    assert actual == [0.0, 0.375, 0.25, 0.375]  # an empty bin: ε stands in for 0
    as_tensor = torch.tensor(edges, dtype=torch.float64)
    ours = [
        bin_shares(torch.tensor(v, dtype=torch.float64), as_tensor) for v in (reference, production)
    ]
    assert ours[0].tolist() == expected and ours[1].tolist() == actual
    for epsilon in (1e-8, 1e-4, 0.01):
        assert psi(*ours, epsilon) == pytest.approx(
            psi_by_hand(expected, actual, epsilon), abs=1e-12
        )


@pytest.mark.parametrize("binning", ["quantile", "equal_width"])
@pytest.mark.parametrize(
    ("bins", "shift", "scale"), [(2, 0.0, 1.0), (10, 0.25, 1.0), (37, -1.0, 2.5)]
)
def test_demo_psi_matches_numpy_edges_and_a_loop(
    run: RunDemo, cpu: torch.device, binning: str, bins: int, shift: float, scale: float
) -> None:
    params = {"reference_samples": 500, "production_samples": 400, "bins": bins}
    params |= {"binning": binning, "mean_shift": shift, "scale": scale, "seed": 3}
    reference, production, same = samples_of(cpu, **params)
    steps = np.arange(1, bins) / bins
    if binning == "quantile":
        edges = np.quantile(reference, steps).tolist()  # NumPy's default is linear, as torch's
    else:
        edges = (min(reference) + (max(reference) - min(reference)) * steps).tolist()
    result = run("systems_drift", **params)
    expected = shares_by_hand(reference, edges)
    by_hand = psi_by_hand(expected, shares_by_hand(production, edges), 1e-4)
    assert result.outputs["psi"] == pytest.approx(by_hand, abs=1e-10)
    floor = psi_by_hand(expected, shares_by_hand(same, edges), 1e-4)
    assert result.outputs["psi_same"] == pytest.approx(floor, abs=1e-10)
    empty = sum(share == 0 for share in shares_by_hand(production, edges))
    assert result.outputs["empty_bins"] == empty


def test_psi_is_the_sum_of_both_kl_divergences() -> None:
    # Σ (a − e)·ln(a/e) = Σ a·ln(a/e) + Σ e·ln(e/a): the Jeffreys divergence of the shares.
    generator = torch.Generator().manual_seed(5)
    for bins in (2, 10, 50):
        e = torch.rand(bins, generator=generator, dtype=torch.float64) + 0.01
        a = torch.rand(bins, generator=generator, dtype=torch.float64) + 0.01
        e, a = e / e.sum(), a / a.sum()
        both_ways = rel_entr(a.numpy(), e.numpy()).sum() + rel_entr(e.numpy(), a.numpy()).sum()
        assert psi(e, a, 1e-12) == pytest.approx(both_ways, abs=1e-12)
        assert psi(e, a, 1e-12) == pytest.approx(psi(a, e, 1e-12), abs=1e-15)  # symmetric
        assert psi(e, e, 1e-12) == 0.0  # identical shares


def test_identical_distributions_give_zero() -> None:
    edges = norm.ppf(np.arange(1, 10) / 10).tolist()
    assert population_psi(edges, 0.0, 1.0, 1e-4) == 0.0
    assert jeffreys(0.0, 1.0) == 0.0
    assert ks_distance(0.0, 1.0) == 0.0


@pytest.mark.parametrize(("mean", "std"), [(0.25, 1.0), (-1.0, 1.0), (0.0, 1.5), (0.7, 0.4)])
def test_population_values_against_closed_forms_and_quadrature(mean: float, std: float) -> None:
    edges = [-2.0, -0.3, 0.0, 0.8, 3.1]
    exact = np.diff(norm.cdf(np.array([-np.inf, *edges, np.inf]), loc=mean, scale=std))
    assert bin_probabilities(edges, mean, std).numpy() == pytest.approx(exact, abs=1e-12)

    def q(x: float) -> float:
        return float(norm.pdf(x, loc=mean, scale=std))

    def integrand(x: float) -> float:
        p = float(norm.pdf(x))
        return (p - q(x)) * (norm.logpdf(x) - norm.logpdf(x, loc=mean, scale=std))

    assert jeffreys(mean, std) == pytest.approx(quad(integrand, -40, 40, limit=200)[0], rel=1e-8)
    grid = np.linspace(-15, 15, 3_000_001)
    gap = np.abs(norm.cdf(grid) - norm.cdf(grid, loc=mean, scale=std)).max()
    assert ks_distance(mean, std) == pytest.approx(gap, abs=1e-9)
    if std == 1.0:  # a pure shift: the CDFs are furthest apart half-way between the means
        assert ks_distance(mean, std) == pytest.approx(2 * norm.cdf(abs(mean) / 2) - 1, abs=1e-12)


def test_shift_direction_does_not_matter_on_symmetric_bins() -> None:
    edges = norm.ppf(np.arange(1, 10) / 10).tolist()
    for shift in (0.1, 0.5, 2.0):
        plus, minus = (
            population_psi(edges, shift, 1.3, 1e-4),
            population_psi(edges, -shift, 1.3, 1e-4),
        )
        assert plus == pytest.approx(minus, rel=1e-9)
        assert jeffreys(shift, 1.3) == jeffreys(-shift, 1.3)
        assert ks_distance(shift, 1.3) == pytest.approx(ks_distance(-shift, 1.3), abs=1e-12)


@pytest.mark.parametrize(("mean", "std"), [(0.25, 1.0), (0.0, 1.5)])
def test_finer_bins_climb_towards_the_jeffreys_divergence(mean: float, std: float) -> None:
    # Merging values into bins cannot raise a KL divergence: population PSI ≤ J, rising with B.
    values = []
    for bins in (5, 10, 50, 400):
        edges = norm.ppf(np.arange(1, bins) / bins).tolist()
        values.append(population_psi(edges, mean, std, 1e-12))
    assert values == sorted(values)
    assert values[-1] <= jeffreys(mean, std)
    assert values[-1] == pytest.approx(jeffreys(mean, std), rel=0.1)


def test_ks_statistic_matches_the_largest_cdf_gap_by_hand(run: RunDemo, cpu: torch.device) -> None:
    for seed, (n, m) in enumerate([(50, 50), (60, 80), (113, 57)]):
        params = {"reference_samples": n, "production_samples": m, "mean_shift": 0.3, "seed": seed}
        reference, production, _ = samples_of(cpu, **params)
        result = run("systems_drift", **params)
        assert result.outputs["ks_statistic"] == pytest.approx(
            ks_by_hand(reference, production), abs=1e-12
        )
        assert ks_by_hand(production, reference) == ks_by_hand(reference, production)


def test_chi_square_matches_pearsons_sum_by_hand(run: RunDemo, cpu: torch.device) -> None:
    params = {"reference_samples": 300, "production_samples": 200, "bins": 6, "mean_shift": 0.2}
    reference, production, _ = samples_of(cpu, **params)
    edges = np.quantile(reference, np.arange(1, 6) / 6).tolist()
    rows = [[s * len(v) for s in shares_by_hand(v, edges)] for v in (reference, production)]
    total = sum(map(sum, rows))
    statistic = 0.0
    for j in range(6):
        column = rows[0][j] + rows[1][j]
        for row in rows:
            expected = sum(row) * column / total
            statistic += (row[j] - expected) ** 2 / expected
    result = run("systems_drift", **params)
    assert result.outputs["chi2_statistic"] == pytest.approx(statistic, rel=1e-9)
    assert result.outputs["chi2_pvalue"] == pytest.approx(chi2.sf(statistic, 5), rel=1e-9)


def test_same_distribution_psi_averages_the_noise_floor(run: RunDemo) -> None:
    # (B − 1)(1/n + 1/m) = 0.009 here; one seed's PSI has a relative spread of about
    # √(2/9) ≈ 0.47, so the mean of 40 seeds is within 25% (over 3 standard errors).
    params = {"reference_samples": 2000, "production_samples": 2000, "mean_shift": 0.0}
    values = [run("systems_drift", **params, seed=s).outputs["psi_same"] for s in range(40)]
    assert noise_floor(10, 2000, 2000) == pytest.approx(0.009)
    assert float(np.mean(values)) == pytest.approx(0.009, rel=0.25)


def test_same_distribution_ks_pvalues_are_uniform(run: RunDemo) -> None:
    # Under the null a p-value is uniform: the count below 0.05 in 60 seeds is binomial;
    # the test fails by chance with probability below 1e-3.
    params = {"reference_samples": 200, "production_samples": 150}
    pvalues = [run("systems_drift", **params, seed=s).outputs["ks_same_pvalue"] for s in range(60)]
    below = sum(p < 0.05 for p in pvalues)
    assert binomtest(below, 60, 0.05).pvalue > 1e-3


# Card claims. Over 100 seeds: defaults (n = m = 10,000, μ 0.25, 10 quantile bins) psi
# 0.047-0.086, psi_population 0.0597-0.0599, psi_same 0.0003-0.0046, ks_statistic 0.090-0.122,
# ks_pvalue below 3e-35. n = m = 100: psi 0.067-0.80 (mean 0.26), psi_same 0.041-0.92.
# n = m = 1000, μ 0: psi_same 0.003-0.043 (mean 0.0179). n = m = 100,000, μ 0.05: psi
# 0.0016-0.0037, ks_pvalue below 1e-11. σ 1.5, μ 0: psi 0.167-0.227. Over 5 seeds,
# psi_population with 50 bins 0.06211-0.06216, with 100 bins 0.06233-0.06235.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "psi", 0.062, 0.03),
        ({}, "psi_population", 0.0598, 0.0005),
        ({"bins": 50}, "psi_population", 0.0621, 0.0003),
        ({"bins": 100}, "psi_population", 0.0623, 0.0003),
        ({}, "jeffreys", 0.0625, 1e-12),
        ({}, "psi_same", 0.002, 0.004),
        ({}, "ks_statistic", 0.10, 0.03),
        ({}, "ks_population", 0.0995, 0.0001),
        ({}, "ks_pvalue", 0.0, 1e-20),
        ({"mean_shift": 0.0, "scale": 1.5}, "psi", 0.195, 0.05),
        ({"mean_shift": 0.0, "scale": 1.5}, "jeffreys", 0.347, 0.001),
        (
            {"reference_samples": 100_000, "production_samples": 100_000, "mean_shift": 0.05},
            "psi",
            0.0024,
            0.002,
        ),
        (  # 300 fresh draws gave p up to 1.7e-10: 1e-9 would be a coin-flip away on another
            # device's draws; 1e-6 needs the statistic over 3 standard deviations low.
            {"reference_samples": 100_000, "production_samples": 100_000, "mean_shift": 0.05},
            "ks_pvalue",
            0.0,
            1e-6,
        ),
    ],
)
def test_card_claims(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    assert run("systems_drift", **params).outputs[output] == pytest.approx(expected, abs=tolerance)


def test_theory_beside_the_measurement(run: RunDemo) -> None:
    result = run("systems_drift")
    assert result.theory["psi"] == result.outputs["psi_population"]
    assert result.theory["psi_same"] == pytest.approx(0.0018)
    assert result.theory["ks_statistic"] == result.outputs["ks_population"]


def test_series(run: RunDemo) -> None:
    result = run("systems_drift", mean_shift=0.5, reference_samples=2000, production_samples=2000)
    series = {s.name: s for s in result.series}
    assert sum(series["reference share"].y) == pytest.approx(1.0)
    assert series["reference share"].y == pytest.approx([0.1] * 10, abs=1e-3)  # quantile bins
    sample, population = series["sample PSI"], series["population PSI"]
    assert sample.x[5] == 0.5  # the same draws, shifted: the series passes through the output
    assert sample.y[5] == pytest.approx(result.outputs["psi"], abs=1e-12)
    assert population.y[5] == pytest.approx(result.outputs["psi_population"], abs=1e-12)
    assert population.y[0] == 0.0
    assert population.y == sorted(population.y)
    assert series["Jeffreys divergence"].y[10] == pytest.approx(1.0)


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("systems_drift").validate({"reference_samples": 100, "bins": 60})
    assert caught.value.problems[0].message == (
        "bins must be at most half of reference_samples, so every quantile bin holds at least "
        "2 reference values, got 60 bins for 100 samples: lower bins to 50 or draw more "
        "reference samples"
    )
    for bad in ({"mean_shift": 4.0}, {"scale": 0.0}, {"binning": "log"}, {"epsilon": 0.0}):
        response = client.post("/demos/systems_drift", json=bad)
        assert response.status_code == 422
        assert response.json()["detail"][0]["param"] == next(iter(bad))
    response = client.post("/demos/systems_drift", json={"reference_samples": 50, "bins": 26})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "bins"

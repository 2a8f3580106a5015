"""pass_at_k: the estimator against Chen et al.'s reference code, exact binomial sums and SciPy.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.integrate import quad
from scipy.stats import beta, betabinom, binom

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.evaluation_pass_at_k import (
    beta_naive_pass_at_k,
    beta_pass_at_k,
    naive_pass_at_k,
    unbiased_pass_at_k,
)
from tests.worker.conftest import RunDemo


def chen_reference(n: int, c: int, k: int) -> float:
    """Figure 3 of Chen et al. 2021, as printed: the product form of 1 - C(n-c,k)/C(n,k)."""
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize(
    ("n", "k"), [(1, 1), (10, 1), (10, 5), (200, 1), (200, 10), (200, 100), (1000, 1000)]
)
def test_estimator_matches_chen_and_exact_binomials(n: int, k: int) -> None:
    correct = torch.arange(n + 1, dtype=torch.float64)
    ours = unbiased_pass_at_k(n, correct, k).tolist()
    for c in range(n + 1):
        exact = 1 - Fraction(comb(n - c, k), comb(n, k))
        assert ours[c] == pytest.approx(float(exact), abs=1e-10)
        assert ours[c] == pytest.approx(chen_reference(n, c, k), abs=1e-10)


@pytest.mark.parametrize(("n", "k", "p"), [(200, 100, 0.01), (20, 10, 0.1), (200, 10, 0.05)])
def test_unbiased_in_expectation_naive_low(n: int, k: int, p: float) -> None:
    c = torch.arange(n + 1, dtype=torch.float64)
    pmf = torch.from_numpy(binom.pmf(np.arange(n + 1), n, p))
    true = 1 - (1 - p) ** k
    assert (pmf * unbiased_pass_at_k(n, c, k)).sum().item() == pytest.approx(true, abs=1e-12)
    assert (pmf * naive_pass_at_k(n, c, k)).sum().item() < true - 0.005


@pytest.mark.parametrize(
    ("mean", "concentration", "k"),
    [(0.2, 1.0, 10), (0.01, 1e4, 100), (0.5, 2.0, 1), (0.3, 0.5, 1000)],
)
def test_beta_closed_form_matches_numerical_integration(
    mean: float, concentration: float, k: int
) -> None:
    a, b = mean * concentration, (1 - mean) * concentration
    expected, _ = quad(
        lambda p: (1 - (1 - p) ** k) * beta.pdf(p, a, b), 0, 1, limit=400, points=[mean]
    )
    assert beta_pass_at_k(mean, concentration, k) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("mean", "concentration", "n", "k"), [(0.01, 1e4, 200, 100), (0.2, 1.0, 200, 10)]
)
def test_naive_expectation_matches_scipy_betabinom(
    mean: float, concentration: float, n: int, k: int
) -> None:
    a, b = mean * concentration, (1 - mean) * concentration
    c = np.arange(n + 1)
    expected = float(np.sum(betabinom.pmf(c, n, a, b) * (1 - (1 - c / n) ** k)))
    assert beta_naive_pass_at_k(mean, concentration, n, k) == pytest.approx(expected, abs=1e-10)


# Card claims: 1000 problems all near pass rate 0.01, n 200, k 100 (Chen et al.'s n and k).
# Over 30 seeds: unbiased 0.614-0.649 (theory 0.632), naive 0.528-0.561 (theory 0.546),
# naive - true -0.103 to -0.071.
CHEN = {"problems": 1000, "k": 100, "pass_rate": 0.01, "concentration": 10_000}


@pytest.mark.parametrize(
    ("output", "expected", "tolerance"),
    [("unbiased", 0.632, 0.025), ("naive", 0.546, 0.025), ("naive_bias", -0.086, 0.025)],
)
def test_naive_underestimates_on_equal_problems(
    run: RunDemo, output: str, expected: float, tolerance: float
) -> None:
    assert run("pass_at_k", **CHEN).outputs[output] == pytest.approx(expected, abs=tolerance)


def test_pooled_plug_in_overestimates_when_problems_differ(run: RunDemo) -> None:
    # Defaults: 164 problems, pass rates Beta with mean 0.2 and a + b = 1 (hopeless to easy).
    result = run("pass_at_k", k=100)
    assert result.outputs["naive_pooled"] > 0.999
    assert result.outputs["unbiased"] == pytest.approx(result.theory["unbiased"], abs=0.1)
    assert result.theory["unbiased"] == pytest.approx(0.658, abs=0.001)


def test_first_k_is_noisier_per_problem(run: RunDemo) -> None:
    outputs = run("pass_at_k", pass_rate=0.3, concentration=10_000).outputs
    assert outputs["first_k_spread"] > 4 * outputs["unbiased_spread"]


def test_pass_at_1_estimators_agree(run: RunDemo) -> None:
    outputs = run("pass_at_k", k=1).outputs
    assert outputs["unbiased"] == pytest.approx(outputs["pass_at_1"], abs=1e-12)
    assert outputs["naive"] == pytest.approx(outputs["pass_at_1"], abs=1e-12)


def test_omitted_k_is_checked_against_samples() -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("pass_at_k").validate({"samples": 5})  # k defaults to 10
    assert caught.value.problems[0].param == "k"


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("pass_at_k").validate({"samples": 5, "k": 10})
    assert caught.value.problems[0].message == (
        "k must be at most the samples per problem (5), got 10: pass@k needs n ≥ k samples"
    )
    response = client.post("/demos/pass_at_k", json={"problems": 10_000, "samples": 1000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["message"] == (
        "problems × samples must be at most 2,097,152 to keep one request under 2 s, "
        "got 10000 × 1000: lower samples to 209 or less"
    )

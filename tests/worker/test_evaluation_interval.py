"""eval_interval: intervals against SciPy, coverage against the binomial distribution.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import pytest
import torch
from fastapi.testclient import TestClient
from scipy.stats import binom, binomtest, norm

from app.demos.params import InvalidParams
from app.demos.specs.evaluation_interval import correlation_range
from app.worker.demos import get_demo
from app.worker.demos.evaluation_interval import (
    cell_probabilities,
    exact_coverage,
    wilson,
    z_value,
)
from tests.worker.conftest import RunDemo


@pytest.mark.parametrize(("k", "n"), [(0, 10), (7, 50), (19, 20), (355, 500), (20, 20)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy(k: int, n: int, confidence: float) -> None:
    low, high = wilson(torch.tensor([float(k)], dtype=torch.float64), n, z_value(confidence))
    expected = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert low.item() == pytest.approx(expected.low, abs=1e-12)
    assert high.item() == pytest.approx(expected.high, abs=1e-12)


@pytest.mark.parametrize(("p", "n"), [(0.95, 20), (0.7, 500), (0.5, 37), (0.01, 1000)])
def test_exact_coverage_matches_a_scipy_binomial_sum(p: float, n: int) -> None:
    z = norm.ppf(0.975)
    wald = wilson_hits = 0.0
    for k in range(n + 1):
        pmf = binom.pmf(k, n, p)
        q = k / n
        half = z * math.sqrt(q * (1 - q) / n)
        wald += pmf * (q - half <= p <= q + half)
        ci = binomtest(k, n).proportion_ci(method="wilson")
        wilson_hits += pmf * (ci.low <= p <= ci.high)
    assert exact_coverage(p, n, z) == pytest.approx((wald, wilson_hits), abs=1e-9)


# Card claims. Over 30 seeds (10,000 trials each): Wald coverage at n 20, p 0.95 0.626-0.651
# (exact 0.639), Wilson 0.921-0.931 (exact 0.925); at n 500, p 0.71 Wald 0.945-0.955.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({"items": 20, "accuracy_a": 0.95}, "wald_coverage", 0.639, 0.02),
        ({"items": 20, "accuracy_a": 0.95}, "wilson_coverage", 0.925, 0.012),
        ({"correlation": 0.5}, "wald_coverage", 0.951, 0.008),
    ],
)
def test_measured_coverage_matches_the_exact_one(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    result = run("eval_interval", **params)
    assert result.outputs[output] == pytest.approx(expected, abs=tolerance)
    assert result.theory[output] == pytest.approx(expected, abs=0.001)


RHO = {"correlation": 0.5}


# Over 30 seeds at 500 items, 0.71 and 0.70, correlation 0.5: SE 0.0194-0.0209,
# bootstrap half-width 0.037-0.042,
# unpaired SE of the gap 0.0280-0.0296, paired 0.0184-0.0216; with correlation 0, paired
# 0.0277-0.0303.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        (RHO, "standard_error", 0.0203, 0.0012),
        (RHO, "half_width", 0.0398, 0.0025),
        (RHO, "bootstrap_half_width", 0.0398, 0.0035),
        (RHO, "difference_se_unpaired", 0.0288, 0.0012),
        (RHO, "difference_se_paired", 0.0204, 0.0025),
        ({"correlation": 0.0}, "difference_se_paired", 0.0288, 0.0020),
    ],
)
def test_standard_errors_match_their_formulas(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    result = run("eval_interval", **params)
    assert result.outputs[output] == pytest.approx(expected, abs=tolerance)
    assert result.theory[output] == pytest.approx(expected, abs=0.0001)


def test_bootstrap_agrees_with_wald_on_a_large_eval(run: RunDemo) -> None:
    outputs = run("eval_interval", items=2000, resamples=4000).outputs
    assert outputs["bootstrap_low"] == pytest.approx(outputs["wald_low"], abs=0.004)
    assert outputs["bootstrap_high"] == pytest.approx(outputs["wald_high"], abs=0.004)
    assert outputs["bootstrap_difference_low"] == pytest.approx(
        outputs["difference_low"], abs=0.005
    )


@pytest.mark.parametrize("correlation", [0.0, 0.5])
def test_items_needed_follows_millers_sample_size_formula(run: RunDemo, correlation: float) -> None:
    a, b = 0.71, 0.70
    var = a * (1 - a) + b * (1 - b) - 2 * correlation * math.sqrt(a * (1 - a) * b * (1 - b))
    expected = (norm.ppf(0.975) + norm.ppf(0.8)) ** 2 * var / (a - b) ** 2
    outputs = run("eval_interval", correlation=correlation, items=50).outputs
    assert outputs["items_needed"] == pytest.approx(expected, rel=1e-9)


def test_no_items_needed_when_the_models_are_equal(run: RunDemo) -> None:
    assert "items_needed" not in run("eval_interval", accuracy_b=0.71).outputs


@pytest.mark.parametrize(("a", "b", "rho"), [(0.71, 0.70, 0.5), (0.9, 0.2, 0.1), (0.5, 0.5, 1.0)])
def test_cells_have_the_asked_marginals_and_correlation(a: float, b: float, rho: float) -> None:
    low, high = correlation_range(a, b)
    rho = min(max(rho, low), high)
    both, a_only, b_only, neither = cell_probabilities(a, b, rho)
    assert both + a_only + b_only + neither == pytest.approx(1.0)
    assert both + a_only == pytest.approx(a) and both + b_only == pytest.approx(b)
    covariance = both - a * b
    assert covariance / math.sqrt(a * (1 - a) * b * (1 - b)) == pytest.approx(rho)


def test_an_infeasible_default_is_refused_too() -> None:
    # Validators run on omitted values as well: items=50000 alone would otherwise
    # resample 50000 × 2000 indices.
    with pytest.raises(InvalidParams) as caught:
        get_demo("eval_interval").validate({"items": 50_000})
    assert caught.value.problems[0].param == "resamples"


def test_impossible_correlation_is_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("eval_interval").validate(
            {"accuracy_a": 0.9, "accuracy_b": 0.2, "correlation": 0.9}
        )
    [problem] = caught.value.problems
    assert problem.param == "correlation"
    assert problem.message == (
        "correlation must be between -0.6667 and 0.1667 for accuracies 0.9 and 0.2 "
        "(two 0/1 scores cannot be more alike or more opposed), got 0.9"
    )
    response = client.post("/demos/eval_interval", json={"items": 50_000, "resamples": 1000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["message"] == (
        "items × resamples must be at most 8,388,608 to keep one request under 2 s, "
        "got 50000 × 1000: lower resamples to 167 or less"
    )


def test_coverage_curves_show_wald_below_wilson_at_small_n(run: RunDemo) -> None:
    series = {s.name: s for s in run("eval_interval", accuracy_a=0.95, items=20).series}
    wald, wilson_curve = series["Wald"], series["Wilson"]
    assert wald.y[0] < 0.7 < 0.9 < wilson_curve.y[0]

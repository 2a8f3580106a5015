"""base_rate_ppv: simulated predictive values against Bayes' rule and exact counting.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

from fractions import Fraction

import pytest
import torch
from fastapi.testclient import TestClient

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_base_rate_ppv import npv, ppv, simulate
from tests.worker.conftest import RunDemo


def test_bayes_rule_equals_counting_a_population_exactly() -> None:
    # Per 10,000 people at 1%: 100 sick, 90 caught; 9,900 healthy, 495 false alarms.
    sick, healthy = Fraction(100), Fraction(9900)
    tp, fp = sick * Fraction(9, 10), healthy * Fraction(5, 100)
    tn, fn = healthy - fp, sick - tp
    assert (tp, fp) == (90, 495)
    assert ppv(0.9, 0.95, 0.01) == pytest.approx(float(tp / (tp + fp)), rel=1e-12)  # 90/585
    assert npv(0.9, 0.95, 0.01) == pytest.approx(float(tn / (tn + fn)), rel=1e-12)


@pytest.mark.parametrize(("sens", "spec", "prev"), [(0.9, 0.95, 0.01), (0.6, 0.99, 0.3)])
def test_two_tests_follow_the_odds_form(sens: float, spec: float, prev: float) -> None:
    # Posterior odds = prior odds × LR², LR = sens / (1 − spec).
    odds = prev / (1 - prev) * (sens / (1 - spec)) ** 2
    assert ppv(sens, spec, prev, tests=2) == pytest.approx(odds / (1 + odds), rel=1e-12)


def test_outputs_are_the_counts_ratios(run: RunDemo, cpu: torch.device) -> None:
    params = get_demo("base_rate_ppv").validate({"population": 200_000, "prevalence": 0.05})
    counts = simulate(params, cpu)
    outputs = run("base_rate_ppv", population=200_000, prevalence=0.05).outputs
    assert sum(counts[cell] for cell in ("tp", "fp", "tn", "fn")) == 200_000
    assert outputs["ppv"] == counts["tp"] / (counts["tp"] + counts["fp"])
    assert outputs["npv"] == counts["tn"] / (counts["tn"] + counts["fn"])
    assert outputs["ppv_two_positives"] == counts["both_sick"] / counts["both"]
    assert outputs["with_condition"] == counts["tp"] + counts["fn"]


# Over 30 seeds with a million people: PPV 0.1507-0.1566 at 1% (Bayes 0.1538),
# 0.0168-0.0188 at 0.1% (0.0177), 0.6643-0.6685 at 10% (0.6667), 0.9468-0.9476 at 50%
# (0.9474); NPV 0.99885-0.99900 at 1% (0.99894); two positives 0.759-0.772 at 1% (0.766);
# FP per TP 5.39-5.64 (5.5); likelihood ratio 17.80-18.12 (18).
@pytest.mark.parametrize(
    ("params", "output", "tolerance"),
    [
        ({}, "ppv", 0.005),
        ({"prevalence": 0.001}, "ppv", 0.0015),
        ({"prevalence": 0.1}, "ppv", 0.004),
        ({"prevalence": 0.5}, "ppv", 0.001),
        ({}, "npv", 0.0002),
        ({}, "ppv_two_positives", 0.012),
        ({}, "false_per_true_positive", 0.2),
        ({}, "likelihood_ratio", 0.25),
    ],
)
def test_simulation_matches_bayes_rule(
    run: RunDemo, params: dict[str, float], output: str, tolerance: float
) -> None:
    result = run("base_rate_ppv", **params)
    assert result.outputs[output] == pytest.approx(result.theory[output], abs=tolerance)


def test_expected_counts(run: RunDemo) -> None:
    theory = run("base_rate_ppv").theory
    assert theory["true_positives"] == pytest.approx(9000)
    assert theory["false_positives"] == pytest.approx(49_500)
    assert theory["positives"] == pytest.approx(58_500)


def test_a_perfectly_specific_test_has_no_false_positives(run: RunDemo) -> None:
    result = run("base_rate_ppv", specificity=1.0, population=10_000)
    assert result.outputs["false_positives"] == 0
    assert result.outputs["ppv"] == 1.0 == result.theory["ppv"]
    assert "likelihood_ratio" not in result.outputs  # no false positive: infinite


def test_no_positive_leaves_the_ppv_out(run: RunDemo) -> None:
    result = run("base_rate_ppv", specificity=1.0, prevalence=1e-5, population=1000)
    assert result.outputs["positives"] == 0
    assert "ppv" not in result.outputs and "ppv" not in result.theory


def test_sweep_ppv_rises_with_prevalence(run: RunDemo) -> None:
    series = {s.name: s for s in run("base_rate_ppv").series}
    bayes, simulated = series["PPV, Bayes' rule"], series["PPV, simulated"]
    assert bayes.y == sorted(bayes.y)
    assert simulated.y == pytest.approx(bayes.y, abs=0.01)
    assert series["confusion matrix"].kind == "bar"


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("base_rate_ppv").validate({"sensitivity": 0})
    assert (
        caught.value.problems[0].message == "sensitivity must be a number between 0.01 and 1, got 0"
    )
    response = client.post("/demos/base_rate_ppv", json={"population": 20_000_000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "population"

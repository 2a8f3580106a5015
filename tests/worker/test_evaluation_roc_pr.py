"""roc_pr_auc: scikit-learn's AUCs against a second implementation and the binormal closed forms.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.integrate import quad
from scipy.stats import mannwhitneyu, norm

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.evaluation_roc_pr import binormal_pr_auc, binormal_roc_auc, draw
from tests.worker.conftest import RunDemo


def average_precision_by_hand(labels: np.ndarray, scores: np.ndarray) -> float:
    """Mean, over the positives, of the precision at each positive's rank (no ties here)."""
    hits = labels[np.argsort(-scores)] == 1
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, ranks.size + 1) / ranks))


@pytest.mark.parametrize(("prevalence", "separation"), [(0.5, 2.0), (0.01, 1.0), (0.05, 0.0)])
def test_sklearn_agrees_with_mann_whitney_and_a_hand_written_average_precision(
    cpu: torch.device, prevalence: float, separation: float
) -> None:
    demo = get_demo("roc_pr_auc")
    params = demo.validate(
        {"prevalence": prevalence, "separation": separation, "samples": 20_000, "seed": 5}
    )
    labels, scores = draw(params, cpu)
    outputs = demo.run(params, cpu).outputs
    u = mannwhitneyu(scores[labels == 1], scores[labels == 0]).statistic
    assert outputs["roc_auc"] == pytest.approx(u / (labels.sum() * (labels.size - labels.sum())))
    assert outputs["average_precision"] == pytest.approx(
        average_precision_by_hand(labels, scores), rel=1e-10
    )


@pytest.mark.parametrize("separation", [0.0, 0.5, 2.0, 4.0])
def test_roc_auc_closed_form(separation: float) -> None:
    # P(X1 > X0) with X1 - X0 ~ N(d', 2).
    assert binormal_roc_auc(separation) == pytest.approx(norm.cdf(separation / math.sqrt(2)))


@pytest.mark.parametrize(
    ("separation", "prevalence"), [(0.0, 0.3), (1.0, 0.5), (2.0, 0.01), (3.0, 0.001)]
)
def test_pr_auc_integral_matches_adaptive_quadrature(separation: float, prevalence: float) -> None:
    def precision(recall: float) -> float:
        fpr = norm.cdf(norm.ppf(recall) - separation)
        return prevalence * recall / (prevalence * recall + (1 - prevalence) * fpr)

    expected, _ = quad(precision, 0, 1, limit=200)
    assert binormal_pr_auc(separation, prevalence) == pytest.approx(expected, abs=2e-5)


# Card claims at d' = 2 (theory ROC-AUC 0.9214). Over 30 seeds: ROC-AUC 0.920-0.923 at
# prevalence 0.5 (200,000 items), 0.917-0.930 at 0.01, 0.910-0.935 at 0.001 (500,000 items);
# average precision 0.921-0.923, 0.658-0.671 (0.1), 0.264-0.283 (0.01, 500,000 items),
# 0.042-0.094 (0.001, 500 positives); with d' = 0 at 0.01: 0.0097-0.0105.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({"prevalence": 0.5}, "roc_auc", 0.921, 0.005),
        ({"prevalence": 0.01}, "roc_auc", 0.921, 0.015),
        ({"prevalence": 0.001, "samples": 500_000}, "roc_auc", 0.921, 0.02),
        ({"prevalence": 0.5}, "average_precision", 0.922, 0.005),
        ({"prevalence": 0.1}, "average_precision", 0.665, 0.015),
        ({"prevalence": 0.01, "samples": 500_000}, "average_precision", 0.269, 0.02),
        ({"prevalence": 0.001, "samples": 500_000}, "average_precision", 0.062, 0.035),
        ({"prevalence": 0.01, "separation": 0.0}, "average_precision", 0.010, 0.001),
    ],
)
def test_roc_auc_stays_and_average_precision_falls(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    result = run("roc_pr_auc", **params)
    assert result.outputs[output] == pytest.approx(expected, abs=tolerance)
    assert result.theory[output] == pytest.approx(expected, abs=0.001)


def test_no_skill_pr_auc_is_the_prevalence() -> None:
    for prevalence in (0.001, 0.01, 0.3):
        assert binormal_pr_auc(0.0, prevalence) == pytest.approx(prevalence, rel=1e-9)


def test_curves_and_sweep(run: RunDemo) -> None:
    series = {s.name: s for s in run("roc_pr_auc", samples=10_000).series}
    roc, pr = series["ROC curve"], series["PR curve"]
    assert roc.x[-1] == pytest.approx(1.0) and roc.y[-1] == pytest.approx(1.0)
    assert pr.y[-1] == pytest.approx(0.01, abs=1e-9)  # everything flagged: precision = prevalence
    [sweep] = [s for s in series.values() if s.name.startswith("PR-AUC")]
    assert sweep.y == sorted(sweep.y, reverse=True)  # falls as the prevalence falls


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("roc_pr_auc").validate({"samples": 1_000_000})
    assert caught.value.problems[0].message == (
        "samples must be an integer between 1000 and 500000, got 1000000"
    )
    response = client.post("/demos/roc_pr_auc", json={"separation": 7})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "separation"

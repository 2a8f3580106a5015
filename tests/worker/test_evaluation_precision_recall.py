"""precision_recall: scikit-learn's numbers against hand counts and the binormal closed forms.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.stats import norm

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.evaluation_precision_recall import binormal_rates, draw
from tests.worker.conftest import RunDemo


@pytest.mark.parametrize("prevalence", [1e-3, 0.1])
def test_sklearn_agrees_with_a_confusion_matrix_counted_by_hand(
    run: RunDemo, cpu: torch.device, prevalence: float
) -> None:
    demo = get_demo("precision_recall")
    params = demo.validate({"prevalence": prevalence, "samples": 20_000, "seed": 3})
    labels, scores = draw(params, cpu)
    flagged = scores.numpy() >= params.threshold
    positive = labels == 1
    tp = int((flagged & positive).sum())
    fp = int((flagged & ~positive).sum())
    fn = int((~flagged & positive).sum())
    tn = int((~flagged & ~positive).sum())
    outputs = demo.run(params, cpu).outputs
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert outputs["precision"] == pytest.approx(precision, abs=1e-12)
    assert outputs["recall"] == pytest.approx(recall, abs=1e-12)
    assert outputs["f1"] == pytest.approx(2 * precision * recall / (precision + recall), abs=1e-12)
    assert outputs["accuracy"] == pytest.approx((tp + tn) / labels.size, abs=1e-12)
    assert outputs["false_positive_rate"] == pytest.approx(fp / (fp + tn), abs=1e-12)
    assert outputs["flagged"] == tp + fp
    assert outputs["positives"] == tp + fn


def test_closed_forms_match_scipy() -> None:
    d, t, pi = 3.0, 2.5, 1e-4
    rates = binormal_rates(d, t, pi)
    tpr, fpr = norm.sf(t - d), norm.sf(t)
    assert rates["recall"] == pytest.approx(tpr, rel=1e-12)
    assert rates["false_positive_rate"] == pytest.approx(fpr, rel=1e-12)
    assert rates["precision"] == pytest.approx(pi * tpr / (pi * tpr + (1 - pi) * fpr), rel=1e-12)
    assert rates["accuracy"] == pytest.approx(pi * tpr + (1 - pi) * (1 - fpr), rel=1e-12)


def test_the_classifier_that_flags_nothing_is_as_accurate_as_the_prevalence_allows(
    run: RunDemo,
) -> None:
    outputs = run("precision_recall").outputs  # prevalence 1e-4: 100 positives in 1,000,000
    assert outputs["positives"] == 100
    assert outputs["baseline_accuracy"] == pytest.approx(0.9999, abs=1e-12)
    assert outputs["baseline_recall"] == 0
    assert outputs["baseline_f1"] == 0
    # A real detector (ROC-AUC 0.98) is *less* accurate than flagging nothing.
    assert outputs["accuracy"] < outputs["baseline_accuracy"]


# Card claims, default threshold 2.5 and d' = 3. Over 30 seeds: accuracy 0.99366-0.99391;
# precision at 1e-4 0.0092-0.0126 (100 positives); at 1e-3 0.097-0.106; at 1e-2 0.525-0.537;
# recall at 1e-2 0.677-0.700; FPR 0.00607-0.00630.
@pytest.mark.parametrize(
    ("prevalence", "output", "expected", "tolerance"),
    [
        (1e-4, "accuracy", 0.99376, 0.0005),
        (1e-4, "precision", 0.011, 0.0022),
        (1e-3, "precision", 0.100, 0.01),
        (1e-2, "precision", 0.529, 0.02),
        (1e-2, "recall", 0.691, 0.025),
        (1e-2, "false_positive_rate", 0.00621, 0.0003),
    ],
)
def test_measurements_match_the_binormal_model(
    run: RunDemo, prevalence: float, output: str, expected: float, tolerance: float
) -> None:
    result = run("precision_recall", prevalence=prevalence)
    assert result.outputs[output] == pytest.approx(expected, abs=tolerance)
    assert result.theory[output] == pytest.approx(expected, abs=tolerance / 5)


def test_recall_and_fpr_do_not_depend_on_prevalence_but_precision_does(run: RunDemo) -> None:
    rare = run("precision_recall", prevalence=1e-3, samples=1_000_000).theory
    common = run("precision_recall", prevalence=0.5, samples=1_000_000).theory
    assert rare["recall"] == pytest.approx(common["recall"], rel=1e-12)
    assert rare["false_positive_rate"] == pytest.approx(common["false_positive_rate"], rel=1e-12)
    assert rare["precision"] < 0.2 < 0.9 < common["precision"]


def test_threshold_sweep_ends_in_the_obvious_corners(run: RunDemo) -> None:
    series = {s.name: s for s in run("precision_recall", prevalence=0.1, samples=10_000).series}
    assert series["recall"].y[0] == pytest.approx(1.0, abs=0.01)  # threshold -2: flag nearly all
    assert series["recall"].y[-1] == pytest.approx(0.0, abs=0.01)  # threshold d' + 4: flag none
    assert all(math.isfinite(v) for s in series.values() for v in s.y)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"prevalence": 0}, "prevalence must be a number between 0.0001 and 0.5, got 0"),
        ({"samples": 10}, "samples must be an integer between 1000 and 1000000, got 10"),
        ({"separation": -1}, "separation must be a number between 0 and 8, got -1"),
    ],
)
def test_bad_parameters_are_refused(raw: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("precision_recall").validate(raw)
    assert [p.message for p in caught.value.problems] == [message]


def test_bad_parameters_get_a_422(client: TestClient) -> None:
    response = client.post("/demos/precision_recall", json={"prevalence": 0.9})
    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "param": "prevalence",
            "message": "prevalence must be a number between 0.0001 and 0.5, got 0.9",
        }
    ]


def test_labels_are_exact_counts(cpu: torch.device) -> None:
    params = get_demo("precision_recall").validate({"prevalence": 0.25, "samples": 1000})
    labels, _ = draw(params, cpu)
    assert labels.dtype == np.int8 and int(labels.sum()) == 250

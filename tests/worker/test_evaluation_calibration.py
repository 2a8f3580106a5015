"""calibration: ECE against a hand-written loop and scikit-learn, T against SciPy's minimiser.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax
from sklearn.calibration import calibration_curve  # type: ignore[import-untyped]

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.evaluation_calibration import (
    expected_nll,
    fit_temperature,
    reliability,
    score,
    simulate,
)
from tests.worker.conftest import RunDemo


def ece_by_hand(confidence: list[float], correct: list[float], bins: int) -> float:
    """Guo et al. eq. (3), one bin at a time: Σ |B_m|/n · |acc(B_m) − conf(B_m)|."""
    total = 0.0
    for m in range(1, bins + 1):
        low, high = (m - 1) / bins, m / bins
        members = [i for i, c in enumerate(confidence) if low < c <= high]
        if members:
            accuracy = sum(correct[i] for i in members) / len(members)
            mean_confidence = sum(confidence[i] for i in members) / len(members)
            total += len(members) / len(confidence) * abs(accuracy - mean_confidence)
    return total


def top_label(cpu: torch.device, **params: object) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence and 0/1 correctness on the test half, logits as reported."""
    _, test = simulate(get_demo("calibration").validate(params), cpu)
    confidence, predicted = test.logits.softmax(-1).max(-1)
    return confidence.numpy(), (predicted == test.labels).double().numpy()


@pytest.mark.parametrize("classes", [2, 10])
@pytest.mark.parametrize("bins", [1, 2, 15, 100])
def test_ece_matches_a_hand_written_loop(cpu: torch.device, classes: int, bins: int) -> None:
    confidence, correct = top_label(cpu, classes=classes, samples=4000, seed=2)
    measured = reliability(torch.from_numpy(confidence), torch.from_numpy(correct), bins).ece
    assert measured == pytest.approx(
        ece_by_hand(confidence.tolist(), correct.tolist(), bins), abs=1e-12
    )


@pytest.mark.parametrize("classes", [2, 10])
@pytest.mark.parametrize("bins", [5, 15])
def test_reliability_bins_match_sklearn_calibration_curve(
    cpu: torch.device, classes: int, bins: int
) -> None:
    # scikit-learn's curve is binary: top-label correctness against top-label confidence.
    confidence, correct = top_label(cpu, classes=classes, samples=4000, seed=4)
    prob_true, prob_pred = calibration_curve(correct, confidence, n_bins=bins)
    result = reliability(torch.from_numpy(confidence), torch.from_numpy(correct), bins)
    shown = result.counts > 0
    assert result.accuracy[shown].numpy() == pytest.approx(prob_true, abs=1e-12)
    assert result.confidence[shown].numpy() == pytest.approx(prob_pred, abs=1e-12)
    # ECE from scikit-learn's bins, weighted by the counts of its own bin rule.
    index = np.searchsorted(np.linspace(0, 1, bins + 1)[1:-1], confidence)
    weights = np.bincount(index, minlength=bins)[np.bincount(index, minlength=bins) > 0]
    expected = float(np.sum(weights / confidence.size * np.abs(prob_true - prob_pred)))
    assert result.ece == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "params",
    [{}, {"overconfidence": 0.4}, {"classes": 2, "logit_std": 1.0}, {"classes": 100}],
)
def test_lbfgs_temperature_matches_scipy_minimize_scalar(
    cpu: torch.device, params: dict[str, float]
) -> None:
    validation, _ = simulate(get_demo("calibration").validate({**params, "samples": 6000}), cpu)
    logits, labels = validation.logits.numpy(), validation.labels.numpy()

    def nll(log_t: float) -> float:
        scaled = log_softmax(logits / math.exp(log_t), axis=1)
        return float(-scaled[np.arange(labels.size), labels].mean())

    best = minimize_scalar(nll, bounds=(-5.0, 5.0), method="bounded", options={"xatol": 1e-10})
    fitted = fit_temperature(validation.logits, validation.labels)
    assert fitted == pytest.approx(math.exp(best.x), rel=1e-5)


def test_temperature_keeps_every_prediction(run: RunDemo) -> None:
    for overconfidence in (0.3, 2.5, 10.0):
        result = run("calibration", overconfidence=overconfidence, samples=4000)
        assert result.outputs["predictions_changed"] == 0
        assert result.outputs["accuracy_after"] == result.outputs["accuracy_before"]


def test_the_true_temperature_gives_the_true_distribution(cpu: torch.device) -> None:
    # Dividing c·z by c gives back z: no gap in any bin without label noise, and the
    # expected NLL is the entropy.
    params = get_demo("calibration").validate({"samples": 4000, "overconfidence": 3.0})
    _, test = simulate(params, cpu)
    exact = score(test, 3.0, 15)
    assert exact.noise_free.ece == pytest.approx(0.0, abs=1e-12)
    probs = test.true_probs
    entropy = -(probs * probs.log()).sum(-1).mean().item()
    assert expected_nll(test.logits / 3.0, probs) == pytest.approx(entropy, rel=1e-12)


# Card claims at the defaults (K 10, σ 3, c 2.5, 10,000 + 10,000 inputs, 15 bins). Over 30
# seeds: T 2.44-2.57, ECE before 0.184-0.209 and after 0.008-0.018, NLL 1.30-1.45 before and
# 0.916-0.977 after, accuracy 0.647-0.673, confidence 0.853-0.860 before and 0.653-0.667 after.
# Calibrated model (c 1): ECE 0.007-0.018 (15 bins) and 0.025-0.033 (100 bins) on 10,000 test
# inputs; 0.020-0.051 and 0.072-0.105 on 1,000.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "temperature", 2.5, 0.1),
        ({}, "ece_before", 0.197, 0.02),
        ({}, "ece_after", 0.013, 0.008),
        ({}, "nll_before", 1.37, 0.1),
        ({}, "nll_after", 0.946, 0.04),
        ({}, "accuracy_before", 0.66, 0.02),
        ({}, "confidence_before", 0.857, 0.008),
        ({}, "confidence_after", 0.661, 0.012),
        ({"overconfidence": 1.0}, "ece_before", 0.012, 0.008),
        ({"overconfidence": 1.0, "bins": 100}, "ece_before", 0.029, 0.006),
        ({"overconfidence": 1.0, "samples": 2000}, "ece_before", 0.034, 0.02),
        ({"overconfidence": 1.0, "samples": 2000, "bins": 100}, "ece_before", 0.09, 0.025),
    ],
)
def test_card_claims(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    assert run("calibration", **params).outputs[output] == pytest.approx(expected, abs=tolerance)


def test_theory_beside_the_measurement(run: RunDemo) -> None:
    result = run("calibration")
    assert result.theory["temperature"] == 2.5
    # Label noise only adds to the binned gap on average; it stays close at 10,000 inputs.
    assert result.theory["ece_before"] == pytest.approx(result.outputs["ece_before"], abs=0.015)
    assert result.theory["ece_after"] < result.outputs["ece_after"]
    assert result.theory["nll_after"] == pytest.approx(result.outputs["nll_after"], abs=0.03)


def test_series(run: RunDemo) -> None:
    result = run("calibration", samples=4000)
    series = {s.name: s for s in result.series}
    for name in ("before", "after"):
        points, counts = series[f"{name} scaling"], series[f"predictions {name} scaling"].y
        assert sum(counts) == 2000
        crowded = [n for n in counts if n > 0]  # the reliability points skip empty bins
        gaps = [n / 2000 * abs(x - y) for x, y, n in zip(points.x, points.y, crowded, strict=True)]
        assert sum(gaps) == pytest.approx(result.outputs[f"ece_{name}"], abs=1e-12)
    curve = series["validation NLL"]
    lowest = curve.x[curve.y.index(min(curve.y))]
    assert 1.5 < lowest < 4  # the minimum of the validation NLL sits near T = 2.5


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("calibration").validate({"classes": 1000})
    assert caught.value.problems[0].message == (
        "samples × classes must be at most 1,048,576 to keep one request under 2 s, "
        "got 20000 × 1000: lower samples to 1048 or less"
    )
    response = client.post("/demos/calibration", json={"overconfidence": 0})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "overconfidence"

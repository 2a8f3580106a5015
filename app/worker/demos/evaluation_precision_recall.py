"""``precision_recall``: accuracy, precision, recall and F1 on a rare class.

Scores follow the equal-variance binormal model: negatives N(0, 1), positives
N(d′, 1), and an item is flagged when its score reaches the threshold t. Then
recall (TPR) = Φ(d′ − t) and the false-positive rate = Φ(−t), and with
prevalence π

    precision = π·TPR / (π·TPR + (1 − π)·FPR)
    accuracy  = π·TPR + (1 − π)·(1 − FPR)

so at π = 10⁻⁴ the classifier that flags nothing is 99.99% accurate, and a
good detector can be less accurate than it while being the only useful one.
The measurements are scikit-learn's (``precision_recall_fscore_support``,
``accuracy_score``, ``balanced_accuracy_score``, ``confusion_matrix``) on simulated labels and
scores.
"""

import math

import numpy as np
import torch
from sklearn.metrics import (  # type: ignore[import-untyped]
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

from app.demos.specs import evaluation_precision_recall as spec
from app.demos.specs.evaluation_precision_recall import PrecisionRecallParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

CURVE_POINTS = 61


def normal_cdf(x: float) -> float:
    """Φ(x), the standard normal CDF.

    Example:
        >>> round(normal_cdf(1.0), 4)
        0.8413
    """
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def binormal_rates(separation: float, threshold: float, prevalence: float) -> dict[str, float]:
    """Population recall, FPR, precision, accuracy and F1 of the thresholded binormal scores.

    Example:
        >>> rates = binormal_rates(3.0, 2.5, 1e-4)
        >>> round(rates["recall"], 4), round(rates["precision"], 4)
        (0.6915, 0.011)
    """
    recall = normal_cdf(separation - threshold)
    fpr = normal_cdf(-threshold)
    flagged = prevalence * recall + (1 - prevalence) * fpr
    precision = prevalence * recall / flagged if flagged > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "recall": recall,
        "false_positive_rate": fpr,
        "precision": precision,
        "accuracy": prevalence * recall + (1 - prevalence) * (1 - fpr),
        "f1": f1,
    }


def draw(params: PrecisionRecallParams, device: torch.device) -> tuple[np.ndarray, torch.Tensor]:
    """Labels (the first round(items × prevalence) are positive) and fp64 scores on ``device``."""
    generator = seeded(device, params.seed)
    positives = max(1, round(params.samples * params.prevalence))
    scores = torch.randn(params.samples, generator=generator, dtype=torch.float64, device=device)
    scores[:positives] += params.separation
    labels = np.zeros(params.samples, dtype=np.int8)
    labels[:positives] = 1
    return labels, scores


def compute(params: PrecisionRecallParams, device: torch.device) -> Outcome:
    """Draw labelled scores on ``device`` and score them with scikit-learn."""
    labels, scores = draw(params, device)
    positives = int(labels.sum())
    flagged = (scores.cpu().numpy() >= params.threshold).astype(np.int8)

    precision, recall, f1, _ = precision_recall_fscore_support(
        labels, flagged, average="binary", zero_division=0
    )
    nothing = np.zeros_like(labels)  # the classifier that never flags anything
    _, base_recall, base_f1, _ = precision_recall_fscore_support(
        labels, nothing, average="binary", zero_division=0
    )
    # FPR = FP / (FP + TN), from scikit-learn's confusion matrix (rows: true 0/1, cols: predicted).
    true_negatives, false_positives, _, _ = confusion_matrix(labels, flagged, labels=[0, 1]).ravel()
    drawn_prevalence = positives / params.samples
    theory = binormal_rates(params.separation, params.threshold, drawn_prevalence)

    return Outcome(
        outputs={
            "accuracy": float(accuracy_score(labels, flagged)),
            "precision": float(precision),
            "recall": float(recall),
            "f1": float(f1),
            "false_positive_rate": float(false_positives / (false_positives + true_negatives)),
            "balanced_accuracy": float(balanced_accuracy_score(labels, flagged)),
            "baseline_accuracy": float(accuracy_score(labels, nothing)),
            "baseline_recall": float(base_recall),
            "baseline_f1": float(base_f1),
            "baseline_balanced_accuracy": float(balanced_accuracy_score(labels, nothing)),
            "positives": float(positives),
            "flagged": float(flagged.sum()),
        },
        theory={
            **theory,
            "baseline_accuracy": 1 - drawn_prevalence,
            "baseline_recall": 0.0,
            "baseline_f1": 0.0,
            "balanced_accuracy": (theory["recall"] + 1 - theory["false_positive_rate"]) / 2,
            "baseline_balanced_accuracy": 0.5,
        },
        series=_threshold_sweep(scores[:positives], scores[positives:], params),
        notes=[
            "Theory: equal-variance binormal model, recall = Φ(d′ − t), FPR = Φ(−t), "
            "at the prevalence actually drawn (positives / items).",
            "The baseline flags nothing: its precision is 0/0, reported by scikit-learn as 0 "
            "(zero_division=0).",
        ],
    )


def _threshold_sweep(
    positive_scores: torch.Tensor, negative_scores: torch.Tensor, params: PrecisionRecallParams
) -> list[Series]:
    """Measured precision, recall and F1 as the threshold moves (counts by binary search)."""
    low, high = -2.0, params.separation + 4.0
    thresholds = torch.linspace(low, high, CURVE_POINTS, dtype=torch.float64)
    positive_sorted = torch.sort(positive_scores.cpu()).values
    negative_sorted = torch.sort(negative_scores.cpu()).values
    # Items at or above t: total minus those strictly below.
    tp = positive_sorted.numel() - torch.searchsorted(positive_sorted, thresholds)
    fp = negative_sorted.numel() - torch.searchsorted(negative_sorted, thresholds)
    tp, fp = tp.double(), fp.double()
    precision = torch.where(tp + fp > 0, tp / (tp + fp).clamp_min(1), torch.zeros_like(tp))
    recall = tp / positive_sorted.numel()
    f1 = torch.where(
        precision + recall > 0,
        2 * precision * recall / (precision + recall).clamp_min(1e-300),
        torch.zeros_like(tp),
    )
    x = thresholds.tolist()
    return [
        Series(name=name, kind="line", x=x, y=values.tolist(), x_label="threshold", y_label="score")
        for name, values in (("precision", precision), ("recall", recall), ("F1", f1))
    ]


# --- the demo -----------------------------------------------------------------------------------

PRECISION_RECALL = Demo(spec=spec.PRECISION_RECALL, compute=compute)

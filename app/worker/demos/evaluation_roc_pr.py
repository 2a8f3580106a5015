"""``roc_pr_auc``: ROC-AUC ignores prevalence, PR-AUC (average precision) does not.

Equal-variance binormal scores: negatives N(0, 1), positives N(d′, 1). ROC-AUC
is the probability that a random positive outscores a random negative
(Hanley & McNeil 1982); the difference of the two scores is N(d′, 2), so
ROC-AUC = Φ(d′/√2) whatever the prevalence π. Precision at recall r is
π·r / (π·r + (1 − π)·Φ(Φ⁻¹(r) − d′)), so the area under the PR curve falls
with π, down to π itself for a classifier with no skill (d′ = 0). The
measurements are scikit-learn's ``roc_auc_score`` and
``average_precision_score`` on simulated scores.
"""

import math
from statistics import NormalDist

import numpy as np
import torch
from sklearn.metrics import average_precision_score, roc_auc_score  # type: ignore[import-untyped]

from app.demos.specs import evaluation_roc_pr as spec
from app.demos.specs.evaluation_roc_pr import RocPrParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

PR_GRID = 20_000
"""Midpoints in recall for the PR-AUC integral: error below 1e-5 on the whole range."""
CURVE_POINTS = 101
SWEEP_PREVALENCES = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)
_NORMAL = NormalDist()


def binormal_roc_auc(separation: float) -> float:
    """Φ(d′/√2): the ROC-AUC of N(d′, 1) positives against N(0, 1) negatives.

    Example:
        >>> round(binormal_roc_auc(2.0), 4)
        0.9214
    """
    return _NORMAL.cdf(separation / math.sqrt(2.0))


def binormal_pr_auc(separation: float, prevalence: float) -> float:
    """Area under the population precision-recall curve, by the midpoint rule in recall.

    Example:
        >>> round(binormal_pr_auc(0.0, 0.01), 6)   # no skill: precision = prevalence
        0.01
    """
    recall = (torch.arange(PR_GRID, dtype=torch.float64) + 0.5) / PR_GRID
    fpr = torch.special.ndtr(torch.special.ndtri(recall) - separation)
    precision = prevalence * recall / (prevalence * recall + (1 - prevalence) * fpr)
    return float(precision.mean().item())


def draw(params: RocPrParams, device: torch.device) -> tuple[np.ndarray, np.ndarray]:
    """Labels (the first round(items × prevalence) are positive) and scores, as numpy arrays."""
    generator = seeded(device, params.seed)
    positives = max(1, round(params.samples * params.prevalence))
    scores = torch.randn(params.samples, generator=generator, dtype=torch.float64, device=device)
    scores[:positives] += params.separation
    labels = np.zeros(params.samples, dtype=np.int8)
    labels[:positives] = 1
    return labels, scores.cpu().numpy()


def compute(params: RocPrParams, device: torch.device) -> Outcome:
    """Score simulated items with scikit-learn; compare with the binormal closed forms."""
    labels, scores = draw(params, device)
    positives = int(labels.sum())
    drawn_prevalence = positives / params.samples
    roc_auc = float(roc_auc_score(labels, scores))
    average_precision = float(average_precision_score(labels, scores))
    pr_theory = binormal_pr_auc(params.separation, drawn_prevalence)
    return Outcome(
        outputs={
            "roc_auc": roc_auc,
            "average_precision": average_precision,
            "prevalence": drawn_prevalence,
            "ap_over_prevalence": average_precision / drawn_prevalence,
            "positives": float(positives),
        },
        theory={
            "roc_auc": binormal_roc_auc(params.separation),
            "average_precision": pr_theory,
            "ap_over_prevalence": pr_theory / drawn_prevalence,
        },
        series=[*_measured_curves(labels, scores), _prevalence_sweep(params.separation)],
        notes=[
            "average_precision is scikit-learn's step-wise sum Σ (R_n − R_(n−1))·P_n, not a "
            "trapezoid; its theory is the area under the population PR curve.",
            "With few positives the measured average precision scatters around the theory: "
            "keep at least a few hundred positives.",
        ],
    )


def _measured_curves(labels: np.ndarray, scores: np.ndarray) -> list[Series]:
    """The measured ROC and PR curves at CURVE_POINTS thresholds (score quantiles)."""
    order = np.argsort(-scores, kind="stable")
    hits = labels[order].astype(np.float64)
    tp = np.cumsum(hits)
    fp = np.cumsum(1.0 - hits)
    picks = np.unique(np.linspace(0, len(scores) - 1, CURVE_POINTS).round().astype(np.int64))
    tpr = tp[picks] / tp[-1]
    fpr = fp[picks] / fp[-1]
    precision = tp[picks] / (tp[picks] + fp[picks])
    return [
        Series(
            name="ROC curve",
            kind="line",
            x=fpr.tolist(),
            y=tpr.tolist(),
            x_label="false-positive rate",
            y_label="true-positive rate (recall)",
        ),
        Series(
            name="PR curve",
            kind="line",
            x=tpr.tolist(),
            y=precision.tolist(),
            x_label="recall",
            y_label="precision",
        ),
    ]


def _prevalence_sweep(separation: float) -> Series:
    """Theory PR-AUC against prevalence for this separation (ROC-AUC would be a flat line)."""
    return Series(
        name=f"PR-AUC, d′ = {separation:g} (ROC-AUC stays {binormal_roc_auc(separation):.3f})",
        kind="line",
        x=list(SWEEP_PREVALENCES),
        y=[binormal_pr_auc(separation, prevalence) for prevalence in SWEEP_PREVALENCES],
        x_label="prevalence",
        y_label="area under the curve",
    )


# --- the demo -----------------------------------------------------------------------------------

ROC_PR_AUC = Demo(spec=spec.ROC_PR_AUC, compute=compute)

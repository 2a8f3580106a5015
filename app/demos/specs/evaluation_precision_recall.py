"""``precision_recall``: accuracy, precision, recall and F1 on a rare class.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_precision_recall.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class PrecisionRecallParams(DemoParams):
    prevalence: float = Field(
        1e-4,
        ge=1e-4,
        le=0.5,
        title="Prevalence",
        description="Share of positives: 1e-4 is one in ten thousand.",
    )
    separation: float = Field(
        3.0,
        ge=0.0,
        le=8.0,
        title="Separation d′",
        description="Positives score N(d′, 1), negatives N(0, 1).",
    )
    threshold: float = Field(
        2.5,
        ge=-5.0,
        le=12.0,
        title="Threshold",
        description="Items scoring at least this are flagged positive.",
    )
    samples: int = Field(
        1_000_000,
        ge=1000,
        le=1_000_000,
        title="Items",
        description="Labelled items drawn; round(items × prevalence) of them are positive.",
    )
    seed: Seed = 0


PRECISION_RECALL = DemoSpec(
    name="precision_recall",
    version=1,
    title="Precision, recall and the accuracy paradox",
    description="Binormal scores on a rare positive class, thresholded and scored with "
    "scikit-learn: accuracy near 1 − prevalence says little; precision and recall say what "
    "the flags are worth.",
    params=PrecisionRecallParams,
    outputs={
        "accuracy": "Share of items classified correctly (sklearn accuracy_score).",
        "precision": "TP / (TP + FP): share of flagged items that are positive.",
        "recall": "TP / (TP + FN): share of positives flagged (TPR).",
        "f1": "Harmonic mean of precision and recall.",
        "false_positive_rate": "FP / negatives: share of negatives flagged.",
        "balanced_accuracy": "Mean of the recall on each class, (TPR + TNR) / 2 (sklearn "
        "balanced_accuracy_score).",
        "baseline_accuracy": "Accuracy of the classifier that flags nothing: 1 − prevalence.",
        "baseline_recall": "Its recall: 0.",
        "baseline_f1": "Its F1: 0 (precision is 0/0, scored 0).",
        "baseline_balanced_accuracy": "Its balanced accuracy: 0.5.",
        "positives": "Positive items drawn: round(items × prevalence), at least 1.",
        "flagged": "Items at or above the threshold.",
    },
    worst_cases=({"samples": 1_000_000, "prevalence": 0.5, "threshold": 0.0},),
)

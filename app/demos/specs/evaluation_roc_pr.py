"""``roc_pr_auc``: ROC-AUC ignores prevalence, PR-AUC (average precision) does not.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_roc_pr.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class RocPrParams(DemoParams):
    prevalence: float = Field(
        0.01,
        ge=0.001,
        le=0.5,
        title="Prevalence",
        description="Share of positives among the items.",
    )
    separation: float = Field(
        2.0,
        ge=0.0,
        le=6.0,
        title="Separation d′",
        description="Positives score N(d′, 1), negatives N(0, 1).",
    )
    samples: int = Field(
        200_000,
        ge=1000,
        le=500_000,
        title="Items",
        description="Scored items drawn; round(items × prevalence) of them are positive.",
    )
    seed: Seed = 0


ROC_PR_AUC = DemoSpec(
    name="roc_pr_auc",
    version=1,
    title="ROC-AUC versus PR-AUC as prevalence changes",
    description="The same score distributions at another prevalence: scikit-learn's ROC-AUC "
    "stays at Φ(d′/√2), its average precision (PR-AUC) falls with the share of positives.",
    params=RocPrParams,
    outputs={
        "roc_auc": "Area under the ROC curve (sklearn roc_auc_score).",
        "average_precision": "Average precision, the step-wise PR-AUC (sklearn "
        "average_precision_score).",
        "prevalence": "Share of positives actually drawn.",
        "ap_over_prevalence": "Average precision / prevalence: how far above a no-skill "
        "classifier (whose PR-AUC is the prevalence).",
        "positives": "Positive items drawn.",
    },
    worst_cases=({"samples": 500_000, "prevalence": 0.5},),
)

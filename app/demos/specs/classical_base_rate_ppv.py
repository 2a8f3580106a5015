"""``base_rate_ppv``: the positive predictive value of a test depends on the base rate.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_base_rate_ppv.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class BaseRatePpvParams(DemoParams):
    prevalence: float = Field(
        0.01,
        ge=1e-5,
        le=0.99,
        title="Prevalence",
        description="Share of the population that has the condition (the base rate).",
    )
    sensitivity: float = Field(
        0.9,
        ge=0.01,
        le=1.0,
        title="Sensitivity",
        description="P(positive test given the condition): the recall.",
    )
    specificity: float = Field(
        0.95,
        ge=0.01,
        le=1.0,
        title="Specificity",
        description="P(negative test given no condition): 1 − the false positive rate.",
    )
    population: int = Field(
        1_000_000,
        ge=1000,
        le=10_000_000,
        title="Population",
        description="People simulated, each with the condition or not and tested twice, "
        "independently.",
    )
    seed: Seed = 0


BASE_RATE_PPV = DemoSpec(
    name="base_rate_ppv",
    version=1,
    title="Base rates and the positive predictive value",
    description="A simulated population takes a test of known sensitivity and specificity: "
    "the share of positives who have the condition (PPV) against Bayes' rule, and how it "
    "falls with the prevalence.",
    params=BaseRatePpvParams,
    outputs={
        "ppv": "Share of positive tests that have the condition, TP / (TP + FP): precision.",
        "npv": "Share of negative tests that do not have it, TN / (TN + FN).",
        "ppv_two_positives": "Share with the condition among those positive on both of two "
        "independent tests.",
        "true_positives": "People with the condition who test positive.",
        "false_positives": "People without it who test positive.",
        "true_negatives": "People without it who test negative.",
        "false_negatives": "People with it who test negative.",
        "positives": "Positive tests: TP + FP.",
        "with_condition": "People drawn with the condition.",
        "false_per_true_positive": "False positives per true positive, FP / TP.",
        "likelihood_ratio": "Measured positive likelihood ratio, (TP / with condition) / "
        "(FP / without): how much a positive multiplies the odds.",
    },
    worst_cases=({"population": 10_000_000, "prevalence": 0.5},),
)

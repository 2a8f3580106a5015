"""``eval_interval``: the error bar of an eval score, and of the gap between two models.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_interval.py``. No torch here.
"""

import math

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_RESAMPLED = 2**23
"""Cap on items × resamples: 8.4M resampled indices, about 0.3 s on a loaded core."""


def correlation_range(a: float, b: float) -> tuple[float, float]:
    """The correlations two 0/1 scores with means a and b can have.

    Example:
        >>> [round(x, 4) for x in correlation_range(0.71, 0.70)]
        [-0.4184, 0.9762]
    """
    spread = math.sqrt(a * (1 - a) * b * (1 - b))
    return (max(0.0, a + b - 1) - a * b) / spread, (min(a, b) - a * b) / spread


class EvalIntervalParams(DemoParams):
    items: int = Field(
        500, ge=10, le=50_000, title="Items", description="Questions in the eval set."
    )
    accuracy_a: float = Field(
        0.71, ge=0.001, le=0.999, title="Accuracy of A", description="Model A's true accuracy."
    )
    accuracy_b: float = Field(
        0.70, ge=0.001, le=0.999, title="Accuracy of B", description="Model B's true accuracy."
    )
    # validate_default: the cross-field checks below must also run on omitted values
    # (pydantic skips validators for defaults otherwise), or a request with
    # items=50000 and no resamples would slip past the budget.
    correlation: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        validate_default=True,
        title="Correlation",
        description="Correlation of A's and B's per-item scores: 0 for independent errors, "
        "higher when they find the same items hard.",
    )
    confidence: float = Field(
        0.95, ge=0.5, le=0.999, title="Confidence", description="Confidence level of intervals."
    )
    resamples: int = Field(
        2000,
        ge=100,
        le=10_000,
        validate_default=True,
        title="Bootstrap resamples",
        description=f"Resampled eval sets; items × resamples may be at most {MAX_RESAMPLED:,}.",
    )
    trials: int = Field(
        10_000,
        ge=100,
        le=100_000,
        title="Coverage trials",
        description="Simulated eval sets used to measure how often each interval covers p.",
    )
    seed: Seed = 0

    @field_validator("correlation")
    @classmethod
    def _feasible(cls, correlation: float, info: ValidationInfo) -> float:
        a, b = info.data.get("accuracy_a"), info.data.get("accuracy_b")
        if a is None or b is None:
            return correlation
        low, high = correlation_range(a, b)
        if not low - 1e-12 <= correlation <= high + 1e-12:
            raise PydanticCustomError(
                "correlation",
                "correlation must be between {low} and {high} for accuracies {a} and {b} "
                "(two 0/1 scores cannot be more alike or more opposed), got {correlation}",
                {
                    "low": round(low, 4),
                    "high": round(high, 4),
                    "a": a,
                    "b": b,
                    "correlation": correlation,
                },
            )
        return correlation

    @field_validator("resamples")
    @classmethod
    def _within_budget(cls, resamples: int, info: ValidationInfo) -> int:
        items = info.data.get("items")
        if items is not None and items * resamples > MAX_RESAMPLED:
            raise PydanticCustomError(
                "budget",
                "items × resamples must be at most {limit} to keep one request under 2 s, "
                "got {items} × {resamples}: lower resamples to {fit} or less",
                {
                    "limit": f"{MAX_RESAMPLED:,}",
                    "items": items,
                    "resamples": resamples,
                    "fit": MAX_RESAMPLED // items,
                },
            )
        return resamples


EVAL_INTERVAL = DemoSpec(
    name="eval_interval",
    version=1,
    title="Confidence interval of an eval score",
    description="Two models scored 0/1 on the same simulated eval set: Wald, Wilson and "
    "bootstrap intervals for one score, the paired interval of their gap, and how often each "
    "interval really covers the true accuracy.",
    params=EvalIntervalParams,
    outputs={
        "accuracy_a": "Model A's measured accuracy.",
        "accuracy_b": "Model B's measured accuracy.",
        "standard_error": "sqrt(p̂(1 − p̂)/n) for A.",
        "half_width": "z × standard_error: the ± of A's Wald interval.",
        "wald_low": "Lower end of A's Wald interval p̂ ± z·SE.",
        "wald_high": "Upper end of A's Wald interval.",
        "wilson_low": "Lower end of A's Wilson score interval.",
        "wilson_high": "Upper end of A's Wilson score interval.",
        "bootstrap_low": "Lower percentile of A's accuracy over resampled item sets.",
        "bootstrap_high": "Upper percentile of A's accuracy over resampled item sets.",
        "bootstrap_half_width": "Half the width of the bootstrap interval, to set beside "
        "half_width.",
        "difference": "Measured accuracy of A − accuracy of B.",
        "difference_se_unpaired": "sqrt(SE_A² + SE_B²): ignores that the items are shared.",
        "difference_se_paired": "Standard error of the mean per-item difference (paired).",
        "difference_low": "Lower end of the paired interval of the difference.",
        "difference_high": "Upper end of the paired interval of the difference.",
        "bootstrap_difference_low": "Lower percentile of the difference over resampled items.",
        "bootstrap_difference_high": "Upper percentile of the difference over resampled items.",
        "wald_coverage": "Share of simulated eval sets whose Wald interval contains A's true "
        "accuracy.",
        "wilson_coverage": "The same for the Wilson interval.",
        "items_needed": "Items a paired test needs to detect the true gap at 80% power "
        "(a planning number; absent when the accuracies are equal).",
    },
    worst_cases=(
        {"items": 50_000, "resamples": 167, "trials": 100_000},
        {"items": 838, "resamples": 10_000, "trials": 100_000},
    ),
)

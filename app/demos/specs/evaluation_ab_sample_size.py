"""``ab_sample_size``: users per arm for a two-proportion A/B test, checked by simulation.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_ab_sample_size.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


def treatment_rate(baseline: float, lift: float, lift_type: str) -> float:
    """The treatment arm's conversion rate p₂ for a lift on the baseline p₁.

    Example:
        >>> round(treatment_rate(0.10, 0.10, "relative"), 4), treatment_rate(0.10, 0.01, "absolute")
        (0.11, 0.11)
    """
    return baseline * (1 + lift) if lift_type == "relative" else baseline + lift


class AbSampleSizeParams(DemoParams):
    baseline: float = Field(
        0.10,
        ge=0.001,
        le=0.99,
        title="Baseline rate p₁",
        description="Conversion rate of the control arm.",
    )
    lift_type: Literal["relative", "absolute"] = Field(
        "relative",
        title="Lift is",
        description="relative: p₂ = p₁ × (1 + lift); absolute: p₂ = p₁ + lift.",
    )
    # validate_default: the check below must also run on an omitted lift, or
    # baseline=0.95 alone would ask for a treatment rate of 1.045.
    lift: float = Field(
        0.10,
        ge=0.0001,
        le=10.0,
        validate_default=True,
        title="Lift",
        description="The smallest effect the test must detect: 0.1 is a 10% relative lift, or "
        "10 points absolute; p₂ must stay below 0.999.",
    )
    alpha: float = Field(
        0.05,
        ge=0.001,
        le=0.2,
        title="Significance α",
        description="Two-sided false-positive rate the test is run at.",
    )
    power: float = Field(
        0.8,
        ge=0.5,
        le=0.99,
        title="Power 1 − β",
        description="Chance of rejecting the null when the lift is real.",
    )
    simulations: int = Field(
        20_000,
        ge=1000,
        le=200_000,
        title="Simulated tests",
        description="A/B tests simulated at each size, with the lift and without it (A/A).",
    )
    seed: Seed = 0

    @field_validator("lift")
    @classmethod
    def _rate_below_one(cls, lift: float, info: ValidationInfo) -> float:
        baseline, lift_type = info.data.get("baseline"), info.data.get("lift_type")
        if baseline is None or lift_type is None:
            return lift
        rate = treatment_rate(baseline, lift, lift_type)
        if rate >= 0.999:
            fit = (0.999 / baseline - 1) if lift_type == "relative" else 0.999 - baseline
            raise PydanticCustomError(
                "lift",
                "lift must keep the treatment rate p₂ below 0.999, got p₂ = {rate} for "
                "baseline {baseline} and a {lift_type} lift of {lift}: lower lift below {fit}",
                {
                    "rate": round(rate, 6),
                    "baseline": baseline,
                    "lift_type": lift_type,
                    "lift": lift,
                    "fit": round(fit, 6),
                },
            )
        return lift


AB_SAMPLE_SIZE = DemoSpec(
    name="ab_sample_size",
    version=1,
    title="Sample size for an A/B test on a conversion rate",
    description="Users per arm for a two-sided two-proportion z-test by the normal-approximation "
    "formula, then thousands of simulated A/B tests at that size: how often they detect the "
    "lift (power) and how often an A/A test rejects (false positives).",
    params=AbSampleSizeParams,
    outputs={
        "n_per_arm": "Users per arm: the formula (z_(1−α/2)·σ₀ + z_(1−β)·σ₁)² / δ², rounded up.",
        "n_half_lift": "Users per arm to detect half the lift (same baseline).",
        "half_lift_ratio": "n_half_lift / n_per_arm: about 4, since n grows as 1/δ².",
        "treatment_rate": "p₂, the treatment arm's rate under the lift.",
        "absolute_lift": "δ = p₂ − p₁.",
        "z_alpha": "z_(1−α/2), the two-sided critical value (scipy.stats.norm.ppf).",
        "z_power": "z_(1−β) (scipy.stats.norm.ppf of the power).",
        "power_formula": "Power of the z-test at n_per_arm by the normal approximation, both "
        "tails counted.",
        "power_measured": "Share of simulated tests with the lift that reject the null at α.",
        "false_positive_rate": "Share of simulated A/A tests (both arms at p₁) that reject.",
        "power_standard_error": "Monte Carlo standard error of power_measured, "
        "sqrt(p(1 − p)/simulations).",
    },
    worst_cases=({"simulations": 200_000},),
)

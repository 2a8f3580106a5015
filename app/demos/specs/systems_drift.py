"""``systems_drift``: PSI, KS and chi-square between a reference and a shifted production sample.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/systems_drift.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_SAMPLES = 100_000
"""Cap on each sample: two ks_2samp calls on 100,000 + 100,000 values stay well under 1 s."""


class DriftParams(DemoParams):
    reference_samples: int = Field(
        10_000,
        ge=50,
        le=MAX_SAMPLES,
        title="Reference samples n",
        description="Values drawn from the reference distribution N(0, 1) (the training data).",
    )
    production_samples: int = Field(
        10_000,
        ge=50,
        le=MAX_SAMPLES,
        title="Production samples m",
        description="Values drawn from the production distribution, and again from the "
        "reference one for the noise floor.",
    )
    mean_shift: float = Field(
        0.25,
        ge=-3.0,
        le=3.0,
        title="Mean shift μ",
        description="Mean of the production distribution, in reference standard deviations.",
    )
    scale: float = Field(
        1.0,
        ge=0.2,
        le=5.0,
        title="Spread factor σ",
        description="Standard deviation of the production distribution (1: spread unchanged).",
    )
    bins: int = Field(
        10,
        ge=2,
        le=100,
        validate_default=True,
        title="Bins B",
        description="Bins of the PSI and the chi-square test; at most half the reference samples.",
    )
    binning: Literal["quantile", "equal_width"] = Field(
        "quantile",
        title="Binning",
        description="quantile: edges at the reference sample's k/B quantiles (equal reference "
        "shares); equal_width: B equal widths over the reference sample's range. The outer "
        "bins are open-ended.",
    )
    epsilon: float = Field(
        1e-4,
        ge=1e-8,
        le=0.01,
        title="Empty-bin floor ε",
        description="A bin share below ε counts as ε in the PSI, so an empty bin gives a large "
        "but finite term.",
    )
    seed: Seed = 0

    @field_validator("bins")
    @classmethod
    def _bins_fit_the_reference(cls, bins: int, info: ValidationInfo) -> int:
        reference = info.data.get("reference_samples")
        if reference is not None and 2 * bins > reference:
            raise PydanticCustomError(
                "bins_vs_samples",
                "bins must be at most half of reference_samples, so every quantile bin holds "
                "at least 2 reference values, got {bins} bins for {reference} samples: lower "
                "bins to {fit} or draw more reference samples",
                {"bins": bins, "reference": reference, "fit": reference // 2},
            )
        return bins


DRIFT = DemoSpec(
    name="systems_drift",
    version=1,
    title="Drift detection: PSI, Kolmogorov–Smirnov and chi-square",
    description="A reference sample from N(0, 1) against a production sample shifted in mean "
    "and scaled in spread: the population stability index on binned shares beside its exact "
    "population value and its noise floor, SciPy's two-sample KS test and a chi-square test "
    "on the same bins.",
    params=DriftParams,
    outputs={
        "psi": "Σ (a − e)·ln(a/e) over the bins, e the reference's and a the production "
        "sample's shares, each floored at ε.",
        "psi_population": "The same on the same edges with the exact bin probabilities of the "
        "two distributions (SciPy quad of the normal densities): what psi tends to as both "
        "samples grow.",
        "psi_same": "PSI between the reference sample and a second sample of m values from "
        "the reference distribution itself: the noise floor.",
        "jeffreys": "KL(P‖Q) + KL(Q‖P) of the two normal distributions, closed form: the "
        "limit of the population PSI as bins get finer.",
        "ks_statistic": "Two-sample Kolmogorov–Smirnov statistic, the largest gap between the "
        "two empirical CDFs (scipy.stats.ks_2samp).",
        "ks_pvalue": "Its two-sided p-value (exact for small samples, asymptotic for large).",
        "ks_population": "Largest distance between the two normal CDFs, sup over x of "
        "F(x) − G(x) in absolute value: what ks_statistic tends to.",
        "ks_same_pvalue": "KS p-value between the reference sample and the same-distribution "
        "sample: uniform on (0, 1) over seeds.",
        "chi2_statistic": "Pearson chi-square statistic of the 2 × B table of bin counts "
        "(scipy.stats.chi2_contingency, no continuity correction; all-empty bins dropped).",
        "chi2_pvalue": "Its p-value, B − 1 degrees of freedom when no bin is dropped.",
        "empty_bins": "Bins the production sample leaves empty, where ε stands in for 0.",
    },
    worst_cases=(
        {
            "reference_samples": MAX_SAMPLES,
            "production_samples": MAX_SAMPLES,
            "bins": 100,
            "scale": 5.0,
            "mean_shift": 3.0,
        },
        {
            "reference_samples": MAX_SAMPLES,
            "production_samples": MAX_SAMPLES,
            "bins": 100,
            "binning": "equal_width",
            "scale": 0.2,
            "mean_shift": -3.0,
        },
    ),
)

"""``pass_at_k``: the unbiased pass@k estimator against the naive plug-in ones.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_pass_at_k.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_SAMPLES = 2**21
"""Cap on problems × samples: 2.1M simulated pass/fail draws, well under a second."""


class PassAtKParams(DemoParams):
    problems: int = Field(
        164, ge=1, le=10_000, title="Problems", description="Problems in the benchmark."
    )
    # validate_default: the cross-field checks below must also run on omitted values
    # (pydantic skips validators for defaults otherwise).
    samples: int = Field(
        200,
        ge=1,
        le=1000,
        validate_default=True,
        title="Samples n",
        description=f"Samples generated per problem; problems × n may be at most {MAX_SAMPLES:,}.",
    )
    k: int = Field(
        10,
        ge=1,
        le=1000,
        validate_default=True,
        title="k",
        description="The k of pass@k (at most n).",
    )
    pass_rate: float = Field(
        0.2,
        ge=0.001,
        le=0.999,
        title="Mean pass rate",
        description="Mean over problems of the chance that one sample passes.",
    )
    concentration: float = Field(
        1.0,
        ge=0.1,
        le=10_000.0,
        title="Concentration",
        description="a + b of the Beta distribution of per-problem pass rates: small values "
        "spread problems from hopeless to easy, large values make them alike.",
    )
    seed: Seed = 0

    @field_validator("samples")
    @classmethod
    def _within_budget(cls, samples: int, info: ValidationInfo) -> int:
        problems = info.data.get("problems")
        if problems is not None and problems * samples > MAX_SAMPLES:
            raise PydanticCustomError(
                "budget",
                "problems × samples must be at most {limit} to keep one request under 2 s, "
                "got {problems} × {samples}: lower samples to {fit} or less",
                {
                    "limit": f"{MAX_SAMPLES:,}",
                    "problems": problems,
                    "samples": samples,
                    "fit": MAX_SAMPLES // problems,
                },
            )
        return samples

    @field_validator("k")
    @classmethod
    def _at_most_samples(cls, k: int, info: ValidationInfo) -> int:
        samples = info.data.get("samples")
        if samples is not None and k > samples:
            raise PydanticCustomError(
                "k_le_n",
                "k must be at most the samples per problem ({samples}), got {k}: pass@k needs "
                "n ≥ k samples",
                {"samples": samples, "k": k},
            )
        return k


PASS_AT_K = DemoSpec(
    name="pass_at_k",
    version=1,
    title="The unbiased pass@k estimator",
    description="Simulated problems of varied difficulty, n samples each: Chen et al.'s "
    "1 − C(n−c,k)/C(n,k) against the plug-in 1 − (1 − c/n)^k, which underestimates pass@k.",
    params=PassAtKParams,
    outputs={
        "unbiased": "Mean over problems of 1 − C(n − c, k)/C(n, k) (Chen et al. 2021).",
        "naive": "Mean over problems of 1 − (1 − c/n)^k.",
        "naive_pooled": "1 − (1 − pass@1)^k with pass@1 pooled over all problems.",
        "first_k": "Share of problems where one of the first k samples passed.",
        "true_pass_at_k": "Mean over problems of 1 − (1 − p_i)^k with the true pass rates.",
        "pass_at_1": "Share of all samples that passed.",
        "naive_bias": "naive − true_pass_at_k: below 0 means an underestimate.",
        "unbiased_spread": "Standard deviation over problems of the unbiased estimate.",
        "first_k_spread": "Standard deviation over problems of the first-k estimate.",
    },
    worst_cases=(
        {"problems": 10_000, "samples": 209, "k": 100},
        {"problems": 2097, "samples": 1000, "k": 1000},
    ),
)

"""``speculative_sampling``: Leviathan et al.'s Algorithm 1 run on a target p and a draft q.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/inference_speculative.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_DRAFTS = 2**20
"""Cap on passes × gamma: the draft tokens drawn, 8 MiB of int64 (about 0.3 s of CPU)."""


class SpeculativeSamplingParams(DemoParams):
    vocab: int = Field(
        8,
        ge=2,
        le=256,
        title="Vocabulary V",
        description="Tokens of the target's and the draft's next-token distributions.",
    )
    logit_scale: float = Field(
        1.5,
        ge=0.0,
        le=4.0,
        title="Target logit scale",
        description="The target p is the softmax of this times standard normal logits "
        "(0: uniform, larger: more peaked).",
    )
    draft_noise: float = Field(
        0.7,
        ge=0.0,
        le=4.0,
        title="Draft noise σ",
        description="The draft's logits are the target's plus σ times standard normal noise "
        "(0: the same logits).",
    )
    draft_temperature: float = Field(
        1.0,
        ge=0.1,
        le=10.0,
        title="Draft temperature",
        description="The draft's logits are divided by this before its softmax; the target "
        "stays at 1 (a temperature mismatch).",
    )
    gamma: int = Field(
        4,
        ge=1,
        le=16,
        title="Draft length γ",
        description="Tokens the draft proposes before each target pass.",
    )
    passes: int = Field(
        200_000,
        ge=1,
        le=262_144,
        title="Target passes",
        description=f"Iterations of Algorithm 1 (one target pass each); passes × gamma may "
        f"be at most {MAX_DRAFTS:,}.",
    )
    cost_ratio: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        title="Cost ratio c",
        description="Time of one draft step over one target pass, for Theorem 3.8's expected "
        "walltime speedup.",
    )
    seed: Seed = 0

    @field_validator("passes")
    @classmethod
    def _drafts_fit(cls, passes: int, info: ValidationInfo) -> int:
        gamma = info.data.get("gamma")
        if gamma is not None and passes * gamma > MAX_DRAFTS:
            raise PydanticCustomError(
                "budget",
                "passes × gamma must be at most {limit} to keep one request well under "
                "2 s, got {passes} × {gamma}: lower passes to {fit} or less",
                {
                    "limit": f"{MAX_DRAFTS:,}",
                    "passes": passes,
                    "gamma": gamma,
                    "fit": f"{MAX_DRAFTS // gamma:,}",
                },
            )
        return passes


SPECULATIVE_SAMPLING = DemoSpec(
    name="speculative_sampling",
    version=1,
    title="Speculative sampling: the emitted tokens follow the target, not the draft",
    description="Runs Leviathan et al.'s Algorithm 1 (and Chen et al.'s modified rejection "
    "sampling) on a target p and a draft q over a small vocabulary: γ draft tokens, accepted "
    "with probability min(1, p/q), the first rejection resampled from norm(max(0, p − q)), a "
    "bonus token from p when all γ survive. Measures the acceptance rate and tokens per pass "
    "against α = Σ min(p, q) and Eq. 1, tests the emitted tokens against p (total variation "
    "and chi-square), and does the same for the variant that resamples from p.",
    params=SpeculativeSamplingParams,
    outputs={
        "alpha": "α = Σ_x min(p(x), q(x)), exact: the chance a draft token is accepted.",
        "tv_draft": "Total-variation distance between the draft q and the target p, exact "
        "(equal to 1 − α).",
        "acceptance_rate": "Accepted draft tokens over draft tokens checked (those up to and "
        "including each pass's first rejection).",
        "tokens_per_pass": "Mean tokens emitted per target pass: accepted drafts plus the "
        "resampled or bonus token.",
        "expected_tokens_per_pass": "Eq. 1: (1 − α^(γ+1)) / (1 − α), or γ + 1 when α = 1.",
        "emitted_tokens": "Tokens emitted over all passes.",
        "tv_emitted": "Total-variation distance between the emitted tokens' frequencies and p.",
        "tv_sampling_floor": "Expected total-variation distance of as many independent draws "
        "from p (normal approximation): the noise tv_emitted sits at when the rule is exact.",
        "chi2_pvalue": "p-value of scipy.stats.chisquare of the emitted tokens' counts against "
        "p (tokens expected fewer than 5 times pooled into one cell).",
        "first_token_tv_exact": "Total-variation distance between p and the exact distribution "
        "of a pass's first emitted token, min(p, q) + (1 − α)·norm(max(0, p − q)): 0.",
        "biased_tv_emitted": "tv_emitted for the variant that resamples a rejected token from "
        "p instead of the residual (same drafts and coins).",
        "biased_chi2_pvalue": "chi2_pvalue for that variant.",
        "biased_first_token_tv_exact": "Exact total-variation distance from p of that variant's "
        "first token, min(p, q) + (1 − α)·p.",
        "walltime_speedup": "Theorem 3.8: (1 − α^(γ+1)) / ((1 − α)(γc + 1)), the expected "
        "walltime improvement for cost ratio c.",
        "measured_speedup": "tokens_per_pass / (γc + 1): the same with the measured tokens per "
        "pass.",
    },
    worst_cases=(
        {"vocab": 256, "gamma": 4, "passes": 262_144, "draft_noise": 4.0},
        {"vocab": 256, "gamma": 16, "passes": 65_536, "logit_scale": 0.0, "draft_noise": 0.1},
    ),
)

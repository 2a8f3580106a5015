"""``loss_scaling``: which gradients fp16 flushes to zero, with and without a loss scale.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_precision.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ELEMENTS = 2**21
"""Cap on tokens × vocab: the fp32 logits and their gradient, 8 MiB each."""


class LossScalingParams(DemoParams):
    vocab: int = Field(
        32_000, ge=2, le=262_144, title="Vocabulary V", description="Logits per token."
    )
    tokens: int = Field(
        64,
        ge=1,
        le=4096,
        title="Tokens computed",
        description=f"Rows of logits back-propagated; tokens × vocab may be at most "
        f"{MAX_ELEMENTS:,}.",
    )
    mean_over: int = Field(
        4096,
        ge=1,
        le=100_000_000,
        title="Tokens in the loss mean",
        description="The loss is a mean over this many tokens (a micro-batch), at least the "
        "tokens computed: each gradient is divided by it.",
    )
    logit_std: float = Field(
        1.0, ge=0.0, le=10.0, title="Logit std", description="Spread of the random logits."
    )
    loss_scale: float = Field(
        65_536.0,
        ge=1.0,
        le=2.0**40,
        title="Loss scale S",
        description="The loss is multiplied by S before the backward pass (GradScaler starts "
        "at 2^16).",
    )
    seed: Seed = 0

    @field_validator("tokens")
    @classmethod
    def _within_budget(cls, tokens: int, info: ValidationInfo) -> int:
        vocab = info.data.get("vocab")
        if vocab is not None and tokens * vocab > MAX_ELEMENTS:
            raise PydanticCustomError(
                "budget",
                "tokens × vocab must be at most {limit} to keep one request small, got "
                "{tokens} × {vocab}: lower tokens to {fit} or less",
                {
                    "limit": f"{MAX_ELEMENTS:,}",
                    "tokens": tokens,
                    "vocab": vocab,
                    "fit": MAX_ELEMENTS // vocab,
                },
            )
        return tokens

    @field_validator("mean_over")
    @classmethod
    def _covers_the_tokens(cls, mean_over: int, info: ValidationInfo) -> int:
        tokens = info.data.get("tokens")
        if tokens is not None and mean_over < tokens:
            raise PydanticCustomError(
                "mean_over",
                "mean_over must be at least tokens ({tokens}): the mean includes every token "
                "computed, got {mean_over}",
                {"tokens": tokens, "mean_over": mean_over},
            )
        return mean_over


LOSS_SCALING = DemoSpec(
    name="loss_scaling",
    version=1,
    title="fp16, bf16 and loss scaling: which gradients underflow",
    description="Back-propagates a real cross-entropy in fp32, casts the logit gradients to "
    "fp16 and bf16, and counts how many become zero with and without a loss scale.",
    params=LossScalingParams,
    outputs={
        "fp16_zero_share": "Share of nonzero fp32 gradients that become 0 in fp16.",
        "fp16_zero_share_scaled": "The same after multiplying the loss by S.",
        "fp16_subnormal_share": "Share kept only as fp16 subnormals (below 2^-14, fewer bits).",
        "fp16_subnormal_share_scaled": "The same with the loss scaled by S.",
        "fp16_inf_share_scaled": "Share that overflows to inf in fp16 with the loss scaled by S.",
        "bf16_zero_share": "Share of nonzero gradients that become 0 in bf16 (no scale).",
        "median_gradient": "Median magnitude of the non-target gradients (theory: "
        "1 / (V e^{σ²/2} mean_over)).",
        "largest_gradient_scaled": "Largest gradient magnitude with the loss scaled by S.",
        "fp16_max": "torch.finfo(float16).max: 65504.",
        "fp16_smallest_normal": "torch.finfo(float16).smallest_normal: 2^-14.",
        "fp16_smallest_subnormal": "smallest_normal × eps: 2^-24.",
        "fp16_eps": "torch.finfo(float16).eps: 2^-10.",
        "bf16_max": "torch.finfo(bfloat16).max: about 3.39e38.",
        "bf16_smallest_normal": "torch.finfo(bfloat16).smallest_normal: 2^-126.",
        "bf16_eps": "torch.finfo(bfloat16).eps: 2^-7.",
    },
    worst_cases=(
        {"vocab": 262_144, "tokens": 8, "mean_over": 8},
        {"vocab": 512, "tokens": 4096, "mean_over": 4096, "logit_std": 10.0},
    ),
)

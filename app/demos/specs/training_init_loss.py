"""``init_loss``: the cross-entropy of a freshly initialised LM head, against ln V.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_init_loss.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_HEAD = 2**23
"""Cap on d_model × vocab: the head's fp32 weights, 32 MiB."""


MAX_MACS = 2**31
"""Cap on tokens × d_model × vocab, the head's multiply-adds: about 0.25 s of CPU."""


HeadInit = Literal["normal", "torch_default", "zeros"]


class InitLossParams(DemoParams):
    vocab: int = Field(
        32_000, ge=2, le=262_144, title="Vocabulary V", description="Tokens the head predicts."
    )
    d_model: int = Field(
        256,
        ge=8,
        le=4096,
        title="d_model",
        description=f"Width of the hidden state; d_model × vocab may be at most {MAX_HEAD:,}.",
    )
    init: HeadInit = Field(
        "normal",
        title="Head init",
        description="normal: N(0, init_std²) as GPT-2 and Llama configs do; torch_default: "
        "nn.Linear's own uniform init; zeros: an all-zero head.",
    )
    init_std: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        title="Init std",
        description="Standard deviation of the head's weights when init is normal.",
    )
    tokens: int = Field(
        256,
        ge=16,
        le=8192,
        title="Tokens",
        description=f"Random tokens scored; tokens × d_model × vocab may be at most {MAX_MACS:,}.",
    )
    seed: Seed = 0

    @field_validator("d_model")
    @classmethod
    def _head_fits(cls, d_model: int, info: ValidationInfo) -> int:
        vocab = info.data.get("vocab")
        if vocab is not None and d_model * vocab > MAX_HEAD:
            raise PydanticCustomError(
                "budget",
                "d_model × vocab must be at most {limit} to keep the head under 32 MiB, got "
                "{d_model} × {vocab}: lower d_model to {fit} or less",
                {
                    "limit": f"{MAX_HEAD:,}",
                    "d_model": d_model,
                    "vocab": vocab,
                    "fit": MAX_HEAD // vocab,
                },
            )
        return d_model

    @field_validator("tokens")
    @classmethod
    def _within_budget(cls, tokens: int, info: ValidationInfo) -> int:
        vocab, d_model = info.data.get("vocab"), info.data.get("d_model")
        if vocab is not None and d_model is not None and tokens * d_model * vocab > MAX_MACS:
            raise PydanticCustomError(
                "budget",
                "tokens × d_model × vocab must be at most {limit} to keep one request under 2 s, "
                "got {tokens} × {d_model} × {vocab}: lower tokens to {fit} or less",
                {
                    "limit": f"{MAX_MACS:,}",
                    "tokens": tokens,
                    "d_model": d_model,
                    "vocab": vocab,
                    "fit": MAX_MACS // (d_model * vocab),
                },
            )
        return tokens


INIT_LOSS = DemoSpec(
    name="init_loss",
    version=1,
    title="The loss at initialisation: ln V",
    description="The cross-entropy of a freshly initialised LM head on random tokens, beside "
    "ln V and ln V + σ²/2 for logits of standard deviation σ.",
    params=InitLossParams,
    outputs={
        "loss": "Mean cross-entropy over the random tokens and random targets, in nats.",
        "expected_loss": "The same averaged over all V possible targets (no target sampling "
        "noise): mean of logsumexp(z) − mean(z).",
        "ln_vocab": "ln V: the cross-entropy of the uniform distribution.",
        "excess": "expected_loss − ln V.",
        "logit_std": "Standard deviation of the logits.",
        "perplexity": "e^expected_loss (V for a uniform prediction).",
    },
    worst_cases=(
        {"vocab": 262_144, "d_model": 32, "tokens": 256},
        {"vocab": 2048, "d_model": 4096, "tokens": 256},
        {"vocab": 1024, "d_model": 256, "tokens": 8192},
    ),
)

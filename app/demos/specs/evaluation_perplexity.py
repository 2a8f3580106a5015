"""``perplexity``: perplexity = exp(cross-entropy), and the same loss in bits.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_perplexity.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_LOGITS = 2**21
"""Cap on tokens × vocab: 2.1M fp64 logits, scored at ten temperatures in about 0.3 s."""


class PerplexityParams(DemoParams):
    vocab: int = Field(
        256, ge=2, le=131_072, title="Vocabulary", description="Tokens the model chooses from."
    )
    # validate_default: the cross-field checks below must also run on omitted values
    # (pydantic skips validators for defaults otherwise), or vocab=131072 alone would
    # ask for 131072 × 8192 logits.
    tokens: int = Field(
        8192,
        ge=16,
        validate_default=True,
        le=100_000,
        title="Tokens",
        description=f"Positions scored; tokens × vocabulary may be at most {MAX_LOGITS:,}.",
    )
    logit_std: float = Field(
        2.0,
        ge=0.0,
        le=10.0,
        title="Logit spread σ",
        description="Standard deviation of the true logits: 0 makes every token equally likely.",
    )
    temperature: float = Field(
        1.0,
        ge=0.1,
        le=10.0,
        title="Model temperature τ",
        description="The model predicts softmax(z / τ): τ = 1 is the true distribution.",
    )
    tokens_per_byte: float = Field(
        0.29335,
        ge=0.01,
        le=4.0,
        title="Tokens per byte",
        description="L_T / L_B: 0.29335 for GPT-2's tokenizer on the Pile (Gao et al. 2020).",
    )
    chunks: int = Field(
        16,
        ge=1,
        le=1024,
        validate_default=True,
        title="Chunks",
        description="Equal slices of the tokens (sentences, say), for the average-of-"
        "perplexities comparison; at most the number of tokens.",
    )
    seed: Seed = 0

    @field_validator("tokens")
    @classmethod
    def _within_budget(cls, tokens: int, info: ValidationInfo) -> int:
        vocab = info.data.get("vocab")
        if vocab is not None and vocab * tokens > MAX_LOGITS:
            raise PydanticCustomError(
                "budget",
                "tokens × vocab must be at most {limit} to keep one request under 2 s, "
                "got {tokens} × {vocab}: lower tokens to {fit} or less",
                {
                    "limit": f"{MAX_LOGITS:,}",
                    "tokens": tokens,
                    "vocab": vocab,
                    "fit": MAX_LOGITS // vocab,
                },
            )
        return tokens

    @field_validator("chunks")
    @classmethod
    def _at_most_tokens(cls, chunks: int, info: ValidationInfo) -> int:
        tokens = info.data.get("tokens")
        if tokens is not None and chunks > tokens:
            raise PydanticCustomError(
                "chunks",
                "chunks must be at most the number of tokens ({tokens}), got {chunks}",
                {"tokens": tokens, "chunks": chunks},
            )
        return chunks


PERPLEXITY = DemoSpec(
    name="perplexity",
    version=1,
    title="Perplexity, cross-entropy and bits per byte",
    description="A toy model scores sampled tokens with torch's cross_entropy: perplexity is "
    "exp of that loss, bits per token divide it by ln 2, bits per byte scale by tokens per byte.",
    params=PerplexityParams,
    outputs={
        "cross_entropy": "Mean negative log-likelihood in nats (F.cross_entropy, reduction mean).",
        "perplexity": "exp(cross_entropy).",
        "bits_per_token": "cross_entropy / ln 2.",
        "bits_per_byte": "bits_per_token × tokens per byte.",
        "perplexity_from_bits": "2^bits_per_token: the same perplexity.",
        "entropy": "Mean entropy of the true next-token distributions, in nats: the floor.",
        "kl_divergence": "Expected cross-entropy − entropy: what the model's miscalibration "
        "costs, in nats per token.",
        "uniform_perplexity": "Perplexity of a model that spreads its bet evenly: the vocabulary "
        "size.",
        "mean_chunk_perplexity": "Average of exp(chunk loss) over the chunks: not the perplexity.",
    },
    worst_cases=(
        {"vocab": 131_072, "tokens": 16},
        {"vocab": 21, "tokens": 99_864, "chunks": 256},
        {"vocab": 256, "tokens": 8192, "chunks": 1024},
    ),
)

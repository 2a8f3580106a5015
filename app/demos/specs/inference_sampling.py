"""``sampling_filters``: temperature, top-k, top-p (nucleus) and min-p on one logit vector.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/inference_sampling.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_VOCAB = 262_144
"""Largest vocabulary: a few sorts of 2¹⁸ fp64 values per temperature, well under 1 s."""


class SamplingParams(DemoParams):
    vocab: int = Field(
        32_000,
        ge=2,
        le=MAX_VOCAB,
        title="Vocabulary",
        description="Tokens in the next-token distribution.",
    )
    exponent: float = Field(
        1.1,
        ge=0.0,
        le=4.0,
        title="Zipf exponent s",
        description="Synthetic logits −s·ln(rank): at temperature 1 the probabilities fall "
        "as rank^−s; 0 with no noise makes every token equally likely.",
    )
    noise: float = Field(
        0.5,
        ge=0.0,
        le=5.0,
        title="Logit noise σ",
        description="Standard deviation of seeded Gaussian noise added to every logit.",
    )
    temperature: float = Field(
        1.0,
        ge=0.01,
        le=10.0,
        title="Temperature τ",
        description="Logits are divided by τ before any filter: τ must be above 0.",
    )
    # validate_default: the cross-field checks below must also run on omitted values.
    top_k: int = Field(
        50,
        ge=0,
        le=MAX_VOCAB,
        validate_default=True,
        title="top_k",
        description="Keep the k highest logits (ties at the k-th kept too); 0 turns the "
        "filter off; at most the vocabulary.",
    )
    top_p: float = Field(
        0.9,
        ge=0.001,
        le=1.0,
        title="top_p",
        description="Keep the smallest set of most likely tokens whose probability adds up "
        "to top_p or more; 1 turns the filter off.",
    )
    min_p: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        title="min_p",
        description="Keep tokens with probability at least min_p × the top token's; "
        "0 keeps every token.",
    )
    min_tokens_to_keep: int = Field(
        1,
        ge=1,
        le=1024,
        validate_default=True,
        title="min_tokens_to_keep",
        description="No filter keeps fewer tokens than this (transformers' argument); "
        "at most the vocabulary.",
    )
    seed: Seed = 0

    @field_validator("top_k", "min_tokens_to_keep")
    @classmethod
    def _at_most_vocab(cls, value: int, info: ValidationInfo) -> int:
        vocab = info.data.get("vocab")
        if vocab is not None and value > vocab:
            raise PydanticCustomError(
                "vocab",
                "{name} must be at most the vocabulary ({vocab}), got {value}",
                {"name": info.field_name, "vocab": vocab, "value": value},
            )
        return value


SAMPLING_FILTERS = DemoSpec(
    name="sampling_filters",
    version=1,
    title="Sampling filters: temperature, top-k, top-p (nucleus) and min-p",
    description="One synthetic next-token logit vector (Zipf-shaped, plus seeded noise) goes "
    "through temperature, top-k, top-p and min-p with the semantics of transformers' logits "
    "warpers: how many tokens each keeps, the probability mass it keeps and the entropy left.",
    params=SamplingParams,
    outputs={
        "entropy": "Entropy of softmax(logits / τ), in nats: before any filter.",
        "entropy_at_t1": "Entropy of softmax(logits), in nats: the distribution at τ = 1.",
        "top_prob": "Probability of the most likely token after temperature.",
        "top_k_kept": "Tokens top-k alone keeps (k, or more on a tie at the k-th logit).",
        "top_k_mass": "Probability mass (after temperature) of the tokens top-k keeps.",
        "top_k_entropy": "Entropy of the renormalised distribution after top-k, in nats.",
        "nucleus_size": "Tokens top-p alone keeps: the smallest set of most likely tokens "
        "with mass ≥ top_p.",
        "nucleus_mass": "Probability mass of the nucleus: at least top_p.",
        "nucleus_entropy": "Entropy of the renormalised nucleus, in nats.",
        "min_p_threshold": "min_p × top_prob: the probability a token needs to survive min-p.",
        "min_p_kept": "Tokens min-p alone keeps.",
        "min_p_mass": "Probability mass of the tokens min-p keeps.",
        "min_p_entropy": "Entropy of the renormalised distribution after min-p, in nats.",
        "combined_kept": "Tokens left after temperature → top-k → top-p → min-p, each on the "
        "previous one's output (transformers' order).",
        "combined_mass": "Probability mass (after temperature) of the tokens left by the chain.",
        "combined_entropy": "Entropy of the distribution the chain samples from, in nats.",
    },
    worst_cases=(
        {"vocab": MAX_VOCAB, "top_k": MAX_VOCAB, "top_p": 0.999, "noise": 5.0, "exponent": 0.0},
        {"vocab": MAX_VOCAB, "temperature": 0.01, "min_tokens_to_keep": 1024, "min_p": 1.0},
    ),
)

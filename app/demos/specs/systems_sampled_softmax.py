"""``sampled_softmax``: sampled softmax with and without the logQ correction, against the full one.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/systems_sampled_softmax.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ITEMS = 5_000
"""Cap on the catalogue: each evaluation of a sampled loss touches 32 × items scores."""

MAX_NEGATIVES = 1_024
"""Cap on the negatives per set: 32 sets of them are drawn for the two sampled losses."""


class SampledSoftmaxParams(DemoParams):
    items: int = Field(
        2_000,
        ge=10,
        le=MAX_ITEMS,
        title="Items V",
        description="Items in the catalogue.",
    )
    zipf_exponent: float = Field(
        1.0,
        ge=0.25,
        le=2.0,
        title="Zipf exponent a",
        description="Popularity Q(i) ∝ rank^−a: the distribution negatives are sampled from, "
        "as in-batch negatives follow item popularity.",
    )
    taste_std: float = Field(
        1.0,
        ge=0.0,
        le=3.0,
        title="Taste std σ",
        description="The target distribution is p(i) ∝ Q(i)·exp(σ·z_i), z_i ~ N(0, 1): how far "
        "one user's taste departs from popularity.",
    )
    negatives: int = Field(
        64,
        ge=1,
        le=MAX_NEGATIVES,
        title="Negatives K",
        description="Negatives per sampled softmax, drawn from Q with replacement.",
    )
    remove_accidental_hits: bool = Field(
        True,
        title="Remove accidental hits",
        description="Drop a sampled negative that equals the positive (TensorFlow's default).",
    )
    top_k: int = Field(
        10,
        ge=1,
        le=100,
        validate_default=True,
        title="Top k",
        description="Items compared at the top of each ranking, and most popular items in the "
        "head share; at most the items.",
    )
    seed: Seed = 0

    @field_validator("top_k")
    @classmethod
    def _top_k_fits(cls, top_k: int, info: ValidationInfo) -> int:
        items = info.data.get("items")
        if items is not None and top_k > items:
            raise PydanticCustomError(
                "top_k_vs_items",
                "top_k must be at most items, got top_k {top_k} for {items} items: lower "
                "top_k to {items} or add items",
                {"top_k": top_k, "items": items},
            )
        return top_k


METHODS = ("full", "uncorrected", "corrected")
"""The three losses: full softmax, sampled softmax, sampled softmax with logQ correction."""

SAMPLED_SOFTMAX = DemoSpec(
    name="sampled_softmax",
    version=1,
    title="Sampled softmax and the logQ correction",
    description="A catalogue with Zipf popularity Q, a user's target distribution p, and a "
    "two-weight scoring model fitted three ways: full softmax, sampled softmax with negatives "
    "drawn from Q, and the same with log Q subtracted from every logit. How much each fit "
    "under-scores popular items, and how far it lands from p.",
    params=SampledSoftmaxParams,
    outputs={
        "popularity_weight_full": "Learned weight β on log Q(i) under the full softmax (the "
        "truth is 1).",
        "popularity_weight_uncorrected": "Learned β under sampled softmax without correction.",
        "popularity_weight_corrected": "Learned β under sampled softmax with log Q subtracted.",
        "taste_weight_full": "Learned weight γ on the taste score z_i, full softmax (the truth "
        "is σ).",
        "taste_weight_uncorrected": "Learned γ, sampled softmax without correction.",
        "taste_weight_corrected": "Learned γ, sampled softmax with the logQ correction.",
        "kl_full": "KL(p ‖ softmax of the full-softmax fit), nats.",
        "kl_uncorrected": "KL(p ‖ softmax of the uncorrected fit), nats.",
        "kl_corrected": "KL(p ‖ softmax of the corrected fit), nats.",
        "kl_uncorrected_limit": "KL(p ‖ p/Q renormalised), nats: the uncorrected fit's KL "
        "when it learns log p − log Q, its optimum as negatives grow.",
        "bias_slope_uncorrected": "Slope of the uncorrected fit's log-probability error "
        "(learned − true) against log Q(i), least squares weighted by p: −1 means popular "
        "items lose exactly log Q.",
        "bias_slope_corrected": "The same slope for the corrected fit.",
        "bias_correlation_uncorrected": "Correlation (weighted by p) between the uncorrected "
        "fit's error and log Q(i).",
        "recall_at_k_uncorrected": "Share of the full-softmax fit's top k items that the "
        "uncorrected fit also ranks in its top k.",
        "recall_at_k_corrected": "The same for the corrected fit.",
        "head_share_uncorrected": "Probability the uncorrected fit gives the k most popular "
        "items, over the probability p gives them.",
        "head_share_corrected": "The same for the corrected fit.",
    },
    worst_cases=(
        {"items": MAX_ITEMS, "negatives": MAX_NEGATIVES, "zipf_exponent": 2.0, "top_k": 100},
        {
            "items": MAX_ITEMS,
            "negatives": MAX_NEGATIVES,
            "zipf_exponent": 0.25,
            "taste_std": 3.0,
            "remove_accidental_hits": False,
        },
    ),
)

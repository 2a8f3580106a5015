"""``position_bias``: naive CTR against inverse propensity weighting on simulated click logs.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/systems_position_bias.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ITEMS = 30
MAX_SESSIONS = 200_000


class PositionBiasParams(DemoParams):
    items: int = Field(
        20,
        ge=2,
        le=MAX_ITEMS,
        title="Items K",
        description="Items in the one result list; every session shows all of them, at "
        "positions 1 to K.",
    )
    sessions: int = Field(
        20_000,
        ge=1_000,
        le=MAX_SESSIONS,
        title="Sessions N",
        description="Logged impressions of the list: each item is shown once per session.",
    )
    eta: float = Field(
        1.0,
        ge=0.0,
        le=2.0,
        title="Examination decay η",
        description="Examination propensity θ_k = (1/k)^η at position k: 0 means no position "
        "bias, 1 halves it from rank 1 to rank 2.",
    )
    ranker_noise: float = Field(
        0.3,
        ge=0.0,
        le=2.0,
        title="Production ranker noise σ",
        description="The production ranker sorts by relevance + N(0, σ²) noise drawn once: "
        "0 is a perfect ranker; the relevances lie in (0.05, 0.95).",
    )
    randomized_share: float = Field(
        0.05,
        ge=0.01,
        le=0.5,
        title="Randomised share",
        description="Share of sessions whose order is shuffled uniformly (RandTopN over all K "
        "positions), used to estimate the propensities; at least 10 sessions at the bounds.",
    )
    clip: float = Field(
        0.1,
        ge=0.001,
        le=1.0,
        title="Propensity floor τ",
        description="Clipped IPW divides by max(θ_k, τ): τ = 1 gives the naive CTR, τ at or "
        "below the smallest θ_k gives plain IPW.",
    )
    cutoff: int = Field(
        5,
        ge=1,
        le=MAX_ITEMS,
        validate_default=True,
        title="nDCG cutoff",
        description="k of nDCG@k (scikit-learn's ndcg_score, the true relevances as gains); at "
        "most K.",
    )
    seed: Seed = 0

    @field_validator("cutoff")
    @classmethod
    def _cutoff_within_the_list(cls, cutoff: int, info: ValidationInfo) -> int:
        items = info.data.get("items")
        if items is not None and cutoff > items:
            raise PydanticCustomError(
                "cutoff_vs_items",
                "cutoff must be at most items, got nDCG@{cutoff} of a {items}-item list: lower "
                "cutoff to {items} or show more items",
                {"cutoff": cutoff, "items": items},
            )
        return cutoff


POSITION_BIAS = DemoSpec(
    name="position_bias",
    version=1,
    title="Position bias: naive CTR against inverse propensity weighting",
    description="Clicks simulated from a position-based model, P(click) = θ_k · relevance with "
    "θ_k = (1/k)^η, on a noisy production ranking plus a small shuffled share: each item's "
    "relevance estimated by its click rate and by IPW (clicks / θ_k, with known, estimated and "
    "clipped propensities), scored against the truth with Kendall's τ and nDCG, and the "
    "variance IPW pays for it.",
    params=PositionBiasParams,
    outputs={
        "naive_mae": "Mean over items of the absolute error of the CTR (clicks / sessions) "
        "against the relevance.",
        "ipw_mae": "The same for IPW with the true propensities: Σ clicks/θ_k over sessions / N.",
        "ipw_estimated_mae": "The same for IPW with the propensities estimated from the "
        "shuffled sessions.",
        "clipped_mae": "The same for IPW with each propensity floored at τ.",
        "naive_mean_bias": "Mean over items of CTR − relevance (negative: clicks are lost "
        "below rank 1).",
        "ipw_mean_bias": "Mean over items of the IPW estimate − relevance.",
        "clipped_mean_bias": "Mean over items of the clipped estimate − relevance.",
        "naive_kendall_tau": "Kendall's τ between the CTRs and the true relevances "
        "(scipy.stats.kendalltau, τ-b).",
        "ipw_kendall_tau": "Kendall's τ between the IPW estimates and the true relevances.",
        "ipw_estimated_kendall_tau": "Kendall's τ between the estimated-propensity IPW "
        "estimates and the true relevances.",
        "clipped_kendall_tau": "Kendall's τ between the clipped estimates and the true relevances.",
        "production_kendall_tau": "Kendall's τ between the production ranker's scores and the "
        "true relevances: the order the logs were collected under.",
        "naive_ndcg": "nDCG@k of the list sorted by CTR, true relevances as gains "
        "(sklearn.metrics.ndcg_score).",
        "ipw_ndcg": "nDCG@k of the list sorted by the IPW estimates.",
        "production_ndcg": "nDCG@k of the production ranking.",
        "propensity_max_error": "Largest absolute error of θ̂_k against θ_k over positions, θ̂_k "
        "the shuffled sessions' click rate at k over that at rank 1.",
        "ess_fraction": "Kish effective sample size of the IPW weights 1/θ_k over all clicks, "
        "(Σw)² / Σw², divided by the number of clicks: 1 when every weight is equal.",
        "clipped_ess_fraction": "The same with the weights 1/max(θ_k, τ).",
        "naive_rmse_expected": "Root of the expected squared error of the CTRs, averaged over "
        "items, closed form given where each item was shown (bias² + binomial variance).",
        "ipw_rmse_expected": "The same for IPW: no bias, all variance.",
        "clipped_rmse_expected": "The same for clipped IPW.",
        "best_clip": "The floor τ, of 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5 and 1, "
        "with the smallest expected squared error averaged over items.",
    },
    uses_device=False,
    worst_cases=(
        {
            "items": MAX_ITEMS,
            "sessions": MAX_SESSIONS,
            "randomized_share": 0.5,
            "eta": 2.0,
            "clip": 0.001,
            "cutoff": MAX_ITEMS,
        },
        {"items": MAX_ITEMS, "sessions": MAX_SESSIONS, "randomized_share": 0.01, "eta": 0.0},
    ),
)

"""``bagging_variance``: the variance of an average of B correlated estimators, ρσ² + (1 − ρ)σ²/B.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_bagging_variance.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_DRAWS = 2**23
"""Cap on draws × estimators: 8.4M Gaussian draws, drawn a chunk at a time."""

MAX_TREES = 300
"""Cap on training_sets × estimators when trees are fitted: about 0.9 s of CPU for bagged trees
(scikit-learn, 100 rows × 50 features, every feature at every split); 400 took 1.2 s."""

TREE_FEATURES = 50
"""Features of ESL's simulation model (15.8) that the trees are fitted on."""

Trees = Literal["none", "bagging", "forest"]


class BaggingVarianceParams(DemoParams):
    rho: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        title="Correlation ρ",
        description="Pairwise correlation of the B estimators.",
    )
    sigma2: float = Field(
        1.0,
        ge=0.01,
        le=100.0,
        title="Variance σ²",
        description="Variance of each estimator.",
    )
    estimators: int = Field(
        10,
        ge=1,
        le=1000,
        title="Estimators B",
        description="Estimators averaged (trees per ensemble when trees are fitted).",
    )
    draws: int = Field(
        50_000,
        ge=1000,
        le=200_000,
        title="Draws",
        description=f"Independent draws of the B estimators; draws × estimators may be at most "
        f"{MAX_DRAWS:,}.",
    )
    trees: Trees = Field(
        "none",
        title="Real trees",
        description="none: only the Gaussian estimators; bagging: also scikit-learn "
        "BaggingRegressor (bagged trees) on ESL's model (15.8); forest: RandomForestRegressor "
        "with max_features = m.",
    )
    max_features: int = Field(
        5,
        ge=1,
        le=TREE_FEATURES,
        title="max_features m",
        description=f"Candidate features per split of the forest (of {TREE_FEATURES}).",
    )
    training_sets: int = Field(
        30,
        ge=10,
        le=200,
        title="Training sets",
        description=f"Training sets of 100 rows the trees are fitted on, each ensemble once; "
        f"training_sets × estimators may be at most {MAX_TREES} when trees are fitted.",
    )
    seed: Seed = 0

    @field_validator("draws")
    @classmethod
    def _draws_within_budget(cls, draws: int, info: ValidationInfo) -> int:
        estimators = info.data.get("estimators")
        if estimators is not None and draws * estimators > MAX_DRAWS:
            raise PydanticCustomError(
                "budget",
                "draws × estimators must be at most {limit} to keep one request under 2 s, got "
                "{draws} × {estimators}: lower draws to {fit} or less",
                {
                    "limit": f"{MAX_DRAWS:,}",
                    "draws": draws,
                    "estimators": estimators,
                    "fit": MAX_DRAWS // estimators,
                },
            )
        return draws

    @field_validator("training_sets")
    @classmethod
    def _trees_within_budget(cls, training_sets: int, info: ValidationInfo) -> int:
        estimators, trees = info.data.get("estimators"), info.data.get("trees")
        if trees in (None, "none") or estimators is None:
            return training_sets
        if training_sets * estimators > MAX_TREES:
            fix = (
                f"lower training_sets to {MAX_TREES // estimators} or less"
                if MAX_TREES // estimators >= 10
                else f"lower estimators to {MAX_TREES // training_sets} or less"
            )
            raise PydanticCustomError(
                "budget",
                "training_sets × estimators must be at most {limit} when trees are fitted, to "
                "keep one request under 2 s, got {training_sets} × {estimators}: {fix}",
                {
                    "limit": MAX_TREES,
                    "training_sets": training_sets,
                    "estimators": estimators,
                    "fix": fix,
                },
            )
        return training_sets


BAGGING_VARIANCE = DemoSpec(
    name="bagging_variance",
    version=1,
    title="Variance of an average of correlated estimators (bagging, random forests)",
    description="B equicorrelated Gaussian estimators drawn with torch: the variance of their "
    "average against ρσ² + (1 − ρ)σ²/B (ESL eq. 15.1), and optionally the correlation and "
    "variance of real scikit-learn trees across training sets.",
    params=BaggingVarianceParams,
    outputs={
        "variance_of_average": "Measured variance of the average of the B estimators.",
        "single_variance": "Measured variance of one estimator (averaged over the B).",
        "measured_rho": "Mean pairwise covariance / mean variance of the B estimators "
        "(absent when B = 1).",
        "floor": "ρσ²: the variance of the average as B grows without bound.",
        "relative_error": "variance_of_average / (ρσ² + (1 − ρ)σ²/B) − 1: sampling noise.",
        "tree_rho": "Trees: correlation between two trees' predictions at a point across "
        "training sets, averaged over pairs and 50 test points.",
        "tree_variance": "Trees: variance of one tree's prediction at a point across training "
        "sets, averaged over trees and points.",
        "tree_average_variance": "Trees: variance of the B-tree average at a point across "
        "training sets, averaged over points.",
        "tree_floor": "Trees: tree_rho × tree_variance, the limit as B grows.",
    },
    worst_cases=(
        {"estimators": 1000, "draws": MAX_DRAWS // 1000},
        {"estimators": 41, "draws": 200_000},
        {"estimators": 10, "draws": 200_000, "trees": "bagging", "training_sets": 30},
        {"estimators": 30, "draws": 200_000, "trees": "bagging", "training_sets": 10},
    ),
)

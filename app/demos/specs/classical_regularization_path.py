"""``regularization_path``: the lasso's exact zeros along its path, and ridge's none.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_regularization_path.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

Design = Literal["correlated", "orthonormal"]


class RegularizationPathParams(DemoParams):
    features: int = Field(20, ge=2, le=100, title="Features p", description="Columns of X.")
    informative: int = Field(
        5,
        ge=1,
        le=100,
        title="Informative k",
        description="Features with a nonzero true coefficient (the first k; sizes from 3 down "
        "to 0.5, alternating in sign); at most p.",
    )
    samples: int = Field(
        100,
        ge=10,
        le=1000,
        title="Samples n",
        description="Rows of the training set.",
    )
    design: Design = Field(
        "correlated",
        title="Design",
        description="correlated: Gaussian rows with corr(x_i, x_j) = ρ^abs(i − j); orthonormal: "
        "columns rescaled to XᵀX = nI (needs n ≥ p; ρ unused), where both solutions have "
        "closed forms.",
    )
    correlation: float = Field(
        0.5,
        ge=0.0,
        le=0.9,
        title="Correlation ρ",
        description="Correlation of neighbouring features in the correlated design.",
    )
    noise: float = Field(
        1.0,
        ge=0.0,
        le=10.0,
        title="Noise σ",
        description="Standard deviation of the noise: y = Xβ + ε.",
    )
    alpha: float = Field(
        0.1,
        ge=0.001,
        le=100.0,
        title="alpha",
        description="Lasso(alpha): (1/2n)‖y − Xw‖² + alpha·‖w‖₁; ridge at the same alpha is "
        "(1/2n)‖y − Xw‖² + (alpha/2)‖w‖², scikit-learn's Ridge(alpha = alpha × n).",
    )
    seed: Seed = 0

    @field_validator("informative")
    @classmethod
    def _at_most_features(cls, informative: int, info: ValidationInfo) -> int:
        features = info.data.get("features")
        if features is not None and informative > features:
            raise PydanticCustomError(
                "informative",
                "informative must be at most features ({features}), got {informative}",
                {"features": features, "informative": informative},
            )
        return informative

    @field_validator("design")
    @classmethod
    def _orthonormal_needs_rows(cls, design: str, info: ValidationInfo) -> str:
        features, samples = info.data.get("features"), info.data.get("samples")
        if features is None or samples is None:
            return design
        if design == "orthonormal" and samples < features:
            raise PydanticCustomError(
                "design",
                "an orthonormal design needs samples ≥ features, got {samples} < "
                "{features}: raise samples to {features} or use the correlated design",
                {"samples": samples, "features": features},
            )
        return design


REGULARIZATION_PATH = DemoSpec(
    name="regularization_path",
    version=1,
    title="L1 versus L2: exact zeros along the regularization path",
    description="A sparse linear truth fitted by scikit-learn's lasso_path and Ridge: the "
    "lasso sets coefficients exactly to zero, more as alpha grows, all of them above "
    "max abs(Xᵀy)/n; ridge shrinks every coefficient and zeroes none.",
    params=RegularizationPathParams,
    outputs={
        "alpha_max": "max over j of abs(x_jᵀy) / n: the smallest alpha at which every lasso "
        "coefficient is zero.",
        "lasso_zeros": "Lasso coefficients exactly 0.0 at alpha.",
        "lasso_nonzeros": "Lasso coefficients not zero at alpha.",
        "ridge_zeros": "Ridge coefficients exactly 0.0 at the same alpha.",
        "ridge_nonzeros": "Ridge coefficients not zero.",
        "lasso_true_kept": "Informative features the lasso keeps (nonzero).",
        "lasso_false_kept": "Uninformative features the lasso keeps.",
        "ridge_smallest": "Smallest absolute coefficient of ridge: small, never zero.",
        "lasso_test_mse": "Lasso's mean squared error on 5,000 fresh rows.",
        "ridge_test_mse": "Ridge's mean squared error on the same rows.",
        "lasso_kkt_violation": "Largest violation of the lasso's optimality conditions "
        "abs(x_jᵀr)/n ≤ alpha (= alpha·sign w_j where w_j ≠ 0), relative to alpha: 0 at the "
        "exact solution.",
        "soft_threshold_gap": "Orthonormal design: largest abs(lasso − sign(b)·max(abs(b) − "
        "alpha, 0)) over coefficients, b the least-squares fit.",
        "ridge_closed_form_gap": "Largest abs(Ridge − (XᵀX + n·alpha·I)⁻¹Xᵀy) over coefficients.",
    },
    worst_cases=(
        {"features": 100, "informative": 100, "samples": 100, "correlation": 0.9, "alpha": 0.001},
        {"features": 100, "informative": 100, "samples": 1000, "correlation": 0.9, "alpha": 0.001},
        {"features": 100, "informative": 50, "samples": 50, "correlation": 0.9, "alpha": 0.001},
    ),
)

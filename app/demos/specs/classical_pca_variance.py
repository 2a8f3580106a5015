"""``pca_variance``: explained variance of PCA on data with a known spectrum.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_pca_variance.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ELEMENTS = 2**21
"""Cap on samples × dimensions: a 16 MB fp64 data matrix, of which the demo holds a few copies."""


class PcaVarianceParams(DemoParams):
    dimensions: int = Field(
        20, ge=2, le=256, title="Dimensions", description="Coordinates of each point."
    )
    samples: int = Field(
        2000,
        ge=10,
        le=100_000,
        validate_default=True,
        title="Points",
        description=f"Points drawn; samples × dimensions may be at most {MAX_ELEMENTS:,}.",
    )
    strong: int = Field(
        3,
        ge=0,
        le=50,
        validate_default=True,
        title="Strong directions",
        description="Directions with extra variance on top of the noise (at most the dimensions).",
    )
    signal: float = Field(
        10.0,
        ge=0.0,
        le=1000.0,
        title="Signal",
        description="Extra variance along the first strong direction.",
    )
    decay: float = Field(
        0.5,
        ge=0.01,
        le=1.0,
        title="Decay",
        description="Each further strong direction has decay × the previous one's extra variance.",
    )
    noise: float = Field(
        0.1,
        ge=0.001,
        le=100.0,
        title="Noise variance",
        description="Variance along every direction, strong or not (an isotropic floor).",
    )
    offset: float = Field(
        1.0,
        ge=-100.0,
        le=100.0,
        title="Mean offset",
        description="Mean of every coordinate: PCA centres it away, an uncentred SVD does not.",
    )
    components: int = Field(
        3,
        ge=1,
        le=256,
        validate_default=True,
        title="Components kept",
        description="k for the cumulative ratio and the reconstruction (at most the dimensions).",
    )
    seed: Seed = 0

    @field_validator("samples")
    @classmethod
    def _within_budget(cls, samples: int, info: ValidationInfo) -> int:
        dimensions = info.data.get("dimensions")
        if dimensions is not None and samples * dimensions > MAX_ELEMENTS:
            raise PydanticCustomError(
                "budget",
                "samples × dimensions must be at most {limit} to keep one request under 2 s, "
                "got {samples} × {dimensions}: lower samples to {fit} or less",
                {
                    "limit": f"{MAX_ELEMENTS:,}",
                    "samples": samples,
                    "dimensions": dimensions,
                    "fit": MAX_ELEMENTS // dimensions,
                },
            )
        return samples

    @field_validator("strong", "components")
    @classmethod
    def _at_most_the_dimensions(cls, value: int, info: ValidationInfo) -> int:
        dimensions = info.data.get("dimensions")
        if dimensions is not None and value > dimensions:
            raise PydanticCustomError(
                "dimensions",
                "{name} must be at most dimensions ({dimensions}), got {value}",
                {"name": info.field_name, "dimensions": dimensions, "value": value},
            )
        return value


PCA_VARIANCE = DemoSpec(
    name="pca_variance",
    version=1,
    title="PCA explained variance on a known spectrum",
    description="Gaussian points whose covariance has a chosen spectrum in a random basis: "
    "the explained-variance ratios of torch.linalg.svd on the centred data and of "
    "scikit-learn's PCA, against the true eigenvalues.",
    params=PcaVarianceParams,
    outputs={
        "first_ratio": "Share of the variance along the first principal component "
        "(torch.linalg.svdvals of the centred data).",
        "cumulative_ratio": "Share of the variance in the first k components.",
        "components_90": "Fewest components whose cumulative share reaches 90%.",
        "components_95": "Fewest components whose cumulative share reaches 95%.",
        "reconstruction_error": "Squared error of projecting onto sklearn PCA's first k "
        "components and back, summed over the points and divided by n − 1.",
        "top_eigenvalue": "Largest eigenvalue of the sample covariance, S₁² / (n − 1).",
        "total_variance": "Sum of the sample covariance's eigenvalues (its trace).",
        "sklearn_gap": "Largest difference between torch's and sklearn PCA's explained-variance "
        "ratios, over all components.",
        "uncentered_first_ratio": "The first ratio an SVD of the data without centring "
        "reports: the mean offset takes the first direction.",
    },
    worst_cases=(
        {"dimensions": 256, "samples": 8192, "strong": 50, "components": 256},
        {"dimensions": 20, "samples": 100_000, "strong": 20, "components": 20},
    ),
)

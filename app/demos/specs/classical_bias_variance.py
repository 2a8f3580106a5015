"""``bias_variance``: squared bias, variance and noise of polynomial fits add up to the test MSE.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_bias_variance.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_DEGREE = 15
"""Highest polynomial degree, in the form and in the series over degrees."""

MAX_LABELS = 2**20
"""Cap on n × trainings: each (n, trainings) array of labels or fits is 8 MiB in fp64."""


class BiasVarianceParams(DemoParams):
    degree: int = Field(
        3,
        ge=0,
        le=MAX_DEGREE,
        title="Degree",
        description="Degree of the polynomial fitted by least squares (degree + 1 coefficients); "
        "at most n − 1.",
    )
    n: int = Field(
        20,
        ge=2,
        le=200,
        title="Points n",
        description="Inputs in each training set, evenly spaced on [0, 1] and the same for every "
        "set; the test points are the same inputs.",
    )
    noise: float = Field(
        0.3,
        ge=0.0,
        le=2.0,
        title="Noise σ",
        description="Standard deviation of the Gaussian noise on each label: y = sin(2πx) + ε.",
    )
    trainings: int = Field(
        5000,
        ge=100,
        le=20_000,
        title="Training sets",
        description=f"Training sets drawn (new noise each); n × trainings may be at most "
        f"{MAX_LABELS:,}.",
    )
    seed: Seed = 0

    @field_validator("n")
    @classmethod
    def _enough_points(cls, n: int, info: ValidationInfo) -> int:
        degree = info.data.get("degree")
        if degree is not None and degree > n - 1:
            raise PydanticCustomError(
                "degree",
                "n must be more than the degree ({degree}): a polynomial of degree {degree} has "
                "{coefficients} coefficients and least squares needs at least as many points, "
                "got n = {n}: raise n to {coefficients} or more",
                {"degree": degree, "coefficients": degree + 1, "n": n},
            )
        return n

    @field_validator("trainings")
    @classmethod
    def _within_budget(cls, trainings: int, info: ValidationInfo) -> int:
        n = info.data.get("n")
        if n is not None and n * trainings > MAX_LABELS:
            raise PydanticCustomError(
                "budget",
                "n × trainings must be at most {limit} to keep one request under 2 s, got "
                "{n} × {trainings}: lower trainings to {fit} or less",
                {
                    "limit": f"{MAX_LABELS:,}",
                    "n": n,
                    "trainings": trainings,
                    "fit": MAX_LABELS // n,
                },
            )
        return trainings


BIAS_VARIANCE = DemoSpec(
    name="bias_variance",
    version=1,
    title="Bias² + variance + noise = expected test MSE, for polynomial fits",
    description="Many training sets from y = sin(2πx) + noise, each fitted by least squares "
    "with a polynomial: the squared bias of the average fit, the spread of the fits and the "
    "noise add up to the error measured against fresh labels (ESL §7.3).",
    params=BiasVarianceParams,
    outputs={
        "bias2": "Squared bias: (average fit − sin 2πx)², averaged over the test points.",
        "variance": "Variance of the fits over training sets, averaged over the test points.",
        "noise": "Measured noise: mean squared distance of the fresh labels from sin 2πx.",
        "decomposition": "bias2 + variance + noise.",
        "test_mse": "Mean squared error of the fits against fresh noisy labels at the test points.",
        "decomposition_gap": "test_mse − decomposition: the cross terms the derivation says "
        "vanish in expectation.",
        "train_mse": "Mean squared error of the fits on their own training labels.",
        "coefficients": "degree + 1: the coefficients of the polynomial.",
        "best_degree": "The degree, from 0 to min(15, n − 1), with the lowest measured test MSE "
        "(on the same training sets).",
    },
    worst_cases=(
        {"degree": MAX_DEGREE, "n": 200, "trainings": MAX_LABELS // 200},
        {"degree": MAX_DEGREE, "n": 53, "trainings": 19_784},
    ),
)

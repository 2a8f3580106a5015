"""``calibration``: ECE and reliability of an over-confident classifier, before and after
temperature scaling.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/evaluation_calibration.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_LOGITS = 2**20
"""Cap on samples × classes: 1M fp64 logits, one L-BFGS fit on half of them, in about 1 s."""


class CalibrationParams(DemoParams):
    classes: int = Field(
        10, ge=2, le=1000, title="Classes", description="Classes K the model chooses from."
    )
    # validate_default: the budget check below must also run on an omitted value, or
    # classes=1000 alone would ask for 1000 × 20,000 logits.
    samples: int = Field(
        20_000,
        ge=1000,
        le=100_000,
        validate_default=True,
        title="Samples",
        description="Labelled inputs drawn: the first half fits T (validation), the second "
        f"half is scored (test); samples × classes may be at most {MAX_LOGITS:,}.",
    )
    logit_std: float = Field(
        3.0,
        ge=0.1,
        le=10.0,
        title="Logit spread σ",
        description="Standard deviation of the true logits z: labels are drawn from softmax(z).",
    )
    overconfidence: float = Field(
        2.5,
        ge=0.1,
        le=10.0,
        title="Over-confidence",
        description="The model reports this factor × z: above 1 over-confident, below 1 "
        "under-confident, 1 calibrated.",
    )
    bins: int = Field(
        15,
        ge=1,
        le=100,
        title="Bins M",
        description="Equal-width confidence bins ((m − 1)/M, m/M] of the ECE and the "
        "reliability diagram (Guo et al. use 15).",
    )
    seed: Seed = 0

    @field_validator("samples")
    @classmethod
    def _within_budget(cls, samples: int, info: ValidationInfo) -> int:
        classes = info.data.get("classes")
        if classes is not None and classes * samples > MAX_LOGITS:
            raise PydanticCustomError(
                "budget",
                "samples × classes must be at most {limit} to keep one request under 2 s, "
                "got {samples} × {classes}: lower samples to {fit} or less",
                {
                    "limit": f"{MAX_LOGITS:,}",
                    "samples": samples,
                    "classes": classes,
                    "fit": MAX_LOGITS // classes,
                },
            )
        return samples


CALIBRATION = DemoSpec(
    name="calibration",
    version=1,
    title="Calibration, ECE and temperature scaling",
    description="A simulated classifier whose logits are too large: its ECE and reliability "
    "diagram, then one temperature T fitted by NLL on validation data with torch's L-BFGS, "
    "and the same measures on test data. Accuracy does not move.",
    params=CalibrationParams,
    outputs={
        "temperature": "T fitted by minimising the validation NLL over log T (torch.optim.LBFGS).",
        "ece_before": "Expected calibration error on the test half (Guo et al. eq. 3, top-label "
        "confidence, M equal-width bins), logits as reported.",
        "ece_after": "The same after dividing the logits by T.",
        "nll_before": "Mean negative log-likelihood of the test labels (F.cross_entropy), "
        "logits as reported.",
        "nll_after": "The same after dividing the logits by T.",
        "accuracy_before": "Share of test inputs whose top class is the label.",
        "accuracy_after": "The same after dividing by T: equal, since T > 0 keeps the argmax.",
        "confidence_before": "Mean top-label confidence on the test half, as reported.",
        "confidence_after": "The same after dividing by T.",
        "predictions_changed": "Test inputs whose predicted class changed when divided by T: 0.",
        "entropy": "Mean entropy of the true label distributions on the test half, in nats: "
        "the lowest expected NLL any model can reach.",
        "validation_nll_at_one": "Validation NLL at T = 1, where the fit starts.",
        "validation_nll_fitted": "Validation NLL at the fitted T.",
    },
    worst_cases=(
        {"classes": 10, "samples": 100_000, "overconfidence": 0.1, "logit_std": 0.1},
        {"classes": 1000, "samples": 1048, "overconfidence": 10.0, "logit_std": 10.0},
    ),
)

"""``adam_decay``: Adam + L2 against AdamW, and Adam's bias correction, from real optimizer steps.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_adam_decay.py``. No torch here.
"""

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

SMALLEST_CONSTANT_GRAD = 1e-6
"""|constant_grad| below this makes v_t underflow towards 0 and the ratios meaningless."""


class AdamDecayParams(DemoParams):
    lr: float = Field(
        0.01, ge=1e-6, le=1.0, title="Learning rate", description="lr of every optimizer."
    )
    weight_decay: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        title="Weight decay λ",
        description="weight_decay of Adam (an L2 term added to the gradient) and of AdamW "
        "(the weights are multiplied by 1 − lr·λ each step).",
    )
    beta1: float = Field(
        0.9, ge=0.0, le=0.999, title="β₁", description="Decay rate of the first moment m."
    )
    beta2: float = Field(
        0.999,
        ge=0.0,
        le=0.99999,
        title="β₂",
        description="Decay rate of the second moment v.",
    )
    eps: float = Field(
        1e-8, ge=1e-12, le=0.01, title="ε", description="Added to sqrt(v̂) in the denominator."
    )
    steps: int = Field(
        1000, ge=1, le=5000, title="Steps", description="Optimizer steps taken by every run."
    )
    small_grad: float = Field(
        0.001,
        ge=0.0,
        le=1e6,
        title="Small gradient scale",
        description="Scale of the first weight's loss gradient (zero-mean noise × scale).",
    )
    large_grad: float = Field(
        1000.0,
        ge=0.0,
        le=1e6,
        title="Large gradient scale",
        description="Scale of the third weight's loss gradient (the second weight's is 1).",
    )
    constant_grad: float = Field(
        0.01,
        ge=-1000.0,
        le=1000.0,
        title="Constant gradient g",
        description="The gradient of a separate weight at every step, for the bias correction: "
        "nonzero, at least 1e-6 in magnitude.",
    )
    seed: Seed = 0

    @field_validator("constant_grad")
    @classmethod
    def _nonzero(cls, value: float) -> float:
        if abs(value) < SMALLEST_CONSTANT_GRAD:
            raise PydanticCustomError(
                "nonzero",
                "constant_grad must be at least {smallest} in magnitude (the bias-correction "
                "ratios divide by it), got {value}",
                {"smallest": f"{SMALLEST_CONSTANT_GRAD:g}", "value": value},
            )
        return value


ADAM_DECAY = DemoSpec(
    name="adam_decay",
    version=1,
    title="Adam + L2 against AdamW, and Adam's bias correction",
    description="Runs real torch.optim.Adam (weight_decay as an L2 term) and AdamW (decoupled "
    "decay) on weights whose gradients differ in scale, measures how much each weight decays "
    "per step, and reads Adam's moments from optimizer.state to show the bias correction.",
    params=AdamDecayParams,
    outputs={
        "adamw_shrink_small": "AdamW: share of the small-gradient weight the decay removes per "
        "step (theory lr·λ).",
        "adamw_shrink_unit": "AdamW: the same for the weight whose gradient scale is 1.",
        "adamw_shrink_large": "AdamW: the same for the large-gradient weight.",
        "l2_shrink_small": "Adam + L2: share of the small-gradient weight the decay removes per "
        "step (theory lr·λ / (sqrt(v̂) + ε)).",
        "l2_shrink_unit": "Adam + L2: the same for the weight whose gradient scale is 1.",
        "l2_shrink_large": "Adam + L2: the same for the large-gradient weight.",
        "final_none_small": "Small-gradient weight after the last step, Adam without decay "
        "(every weight starts at 1).",
        "final_none_unit": "Unit-gradient weight after the last step, Adam without decay.",
        "final_none_large": "Large-gradient weight after the last step, Adam without decay.",
        "final_l2_small": "Small-gradient weight after the last step, Adam + L2.",
        "final_l2_unit": "Unit-gradient weight after the last step, Adam + L2.",
        "final_l2_large": "Large-gradient weight after the last step, Adam + L2.",
        "final_adamw_small": "Small-gradient weight after the last step, AdamW.",
        "final_adamw_unit": "Unit-gradient weight after the last step, AdamW.",
        "final_adamw_large": "Large-gradient weight after the last step, AdamW.",
        "exp_avg_first": "state['exp_avg'] / g after step 1 (theory 1 − β₁).",
        "exp_avg_sq_first": "state['exp_avg_sq'] / g² after step 1 (theory 1 − β₂).",
        "exp_avg_last": "state['exp_avg'] / g after the last step (theory 1 − β₁^t).",
        "exp_avg_sq_last": "state['exp_avg_sq'] / g² after the last step (theory 1 − β₂^t).",
        "exp_avg_settled_step": "First step at which exp_avg / g exceeds 0.99 (left out if "
        "none does).",
        "exp_avg_sq_settled_step": "First step at which exp_avg_sq / g² exceeds 0.99 (left out "
        "if none does).",
        "uncorrected_ratio_first": "m₁ / sqrt(v₁) / sign(g) from the state, without bias "
        "correction (theory (1 − β₁) / sqrt(1 − β₂)).",
        "uncorrected_ratio_peak": "Largest m_t / sqrt(v_t) / sign(g) over the steps.",
        "uncorrected_peak_step": "The step at which it peaks.",
        "uncorrected_ratio_last": "m_t / sqrt(v_t) / sign(g) after the last step.",
        "uncorrected_settled_step": "First step from which the uncorrected ratio stays within "
        "1% of 1 (left out if it does not within the steps).",
        "corrected_ratio_max_deviation": "Largest abs(m̂_t / sqrt(v̂_t) − sign(g)) over the steps "
        "(theory 0: exact from step 1).",
        "update_over_lr_first": "The weight's real first update divided by lr (theory "
        "g / (abs(g) + ε)).",
        "update_over_lr_last": "Its last update divided by lr.",
    },
    worst_cases=({"steps": 5000},),
)

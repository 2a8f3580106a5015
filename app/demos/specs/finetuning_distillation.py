"""``distillation``: the 1/T² of soft-target gradients, and prompt masking in the SFT loss.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/finetuning_distillation.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_LOGITS = 2**19
"""Cap on rows × classes: one fp64 logit matrix is 4 MiB, and the demo runs autograd through it
at 11 temperatures (the series) plus 4 more."""

MAX_SEQUENCE_LOGITS = 2**20
"""Cap on (prompt + completion tokens) × vocab: the SFT logits, 8 MiB in fp64, made for
5 prompt lengths (the series) and backpropagated twice for each."""


class DistillationParams(DemoParams):
    classes: int = Field(
        10,
        ge=2,
        le=4096,
        title="Classes N",
        description="Classes (or vocabulary entries) the teacher and student score.",
    )
    rows: int = Field(
        256,
        ge=1,
        le=4096,
        title="Rows",
        description=f"Transfer cases; rows × classes may be at most {MAX_LOGITS:,}.",
    )
    logit_std: float = Field(
        1.0,
        ge=0.1,
        le=10.0,
        title="Logit std",
        description="Standard deviation of the teacher's and the student's logits, drawn "
        "independently from N(0, std²).",
    )
    temperature: float = Field(
        10.0,
        ge=1.0,
        le=100.0,
        title="Temperature T",
        description="Temperature of both softmaxes in the soft-target loss.",
    )
    prompt_tokens: int = Field(
        192,
        ge=0,
        le=4096,
        title="Prompt tokens",
        description="Tokens of the prompt in the SFT sequence (after one BOS token).",
    )
    completion_tokens: int = Field(
        64,
        ge=1,
        le=4096,
        title="Completion tokens",
        description="Tokens of the completion that follows the prompt.",
    )
    vocab: int = Field(
        256,
        ge=2,
        le=8192,
        title="SFT vocabulary",
        description="Vocabulary of the tiny SFT model; (prompt + completion tokens) × vocab may "
        f"be at most {MAX_SEQUENCE_LOGITS:,}.",
    )
    seed: Seed = 0

    @field_validator("rows")
    @classmethod
    def _logits_fit(cls, rows: int, info: ValidationInfo) -> int:
        classes = info.data.get("classes")
        if classes is not None and rows * classes > MAX_LOGITS:
            raise PydanticCustomError(
                "budget",
                "rows × classes must be at most {limit} to keep one request under 2 s, got "
                "{rows} × {classes}: lower rows to {fit} or less",
                {
                    "limit": f"{MAX_LOGITS:,}",
                    "rows": rows,
                    "classes": classes,
                    "fit": MAX_LOGITS // classes,
                },
            )
        return rows

    @field_validator("vocab")
    @classmethod
    def _sequence_fits(cls, vocab: int, info: ValidationInfo) -> int:
        prompt, completion = info.data.get("prompt_tokens"), info.data.get("completion_tokens")
        if prompt is None or completion is None:
            return vocab
        targets = prompt + completion
        if targets * vocab > MAX_SEQUENCE_LOGITS:
            raise PydanticCustomError(
                "budget",
                "(prompt_tokens + completion_tokens) × vocab must be at most {limit} to keep one "
                "request under 2 s, got {targets} × {vocab}: lower vocab to {fit} or less",
                {
                    "limit": f"{MAX_SEQUENCE_LOGITS:,}",
                    "targets": targets,
                    "vocab": vocab,
                    "fit": MAX_SEQUENCE_LOGITS // targets,
                },
            )
        return vocab


DISTILLATION = DemoSpec(
    name="distillation",
    version=1,
    title="Distillation's T² and prompt masking in SFT",
    description="Autograd through the soft-target loss KL(softmax(z_t/T) ‖ softmax(z_s/T)) "
    "at temperatures from 1 to 100: its gradient shrinks as 1/T², which the T² factor undoes. "
    "And a tiny language model's SFT loss with the prompt's labels set to -100 or not: what "
    "share of the gradient the prompt takes.",
    params=DistillationParams,
    outputs={
        "soft_loss": "KL(teacher ‖ student) at temperature T, mean over rows, in nats.",
        "soft_grad_norm": "Norm of the soft-target loss's gradient with respect to one row of "
        "student logits, mean over rows, at temperature T.",
        "soft_grad_norm_t2": "The same multiplied by T², as Hinton et al. weight the soft loss.",
        "soft_grad_norm_t1": "The gradient norm at T = 1, for scale.",
        "high_t_limit": "‖(z_s − mean z_s) − (z_t − mean z_t)‖ / N, mean over rows: what "
        "T² × the gradient norm tends to as T grows (the logit-matching limit).",
        "grad_exponent": "Local slope d ln(gradient norm) / d ln T between T and 2T: −2 once T is "
        "large next to the logits, nearer −1 when it is not.",
        "hard_grad_norm": "Gradient norm of the hard-label cross-entropy at T = 1 (label: the "
        "teacher's top class), mean over rows.",
        "soft_over_hard": "soft_grad_norm / hard_grad_norm: the soft loss's pull without T².",
        "soft_over_hard_t2": "soft_grad_norm_t2 / hard_grad_norm: the same with the T² factor.",
        "masked_loss": "SFT cross-entropy with the prompt's labels set to -100 (ignore_index): "
        "mean over the completion targets only.",
        "unmasked_loss": "SFT cross-entropy over every target, prompt and completion.",
        "prompt_loss": "Mean cross-entropy over the prompt targets alone.",
        "completion_loss": "Mean cross-entropy over the completion targets alone.",
        "loss_targets": "Targets the masked loss averages over (labels other than -100).",
        "prompt_target_share": "Share of the unmasked loss's targets that are prompt tokens.",
        "prompt_gradient_share": "Unmasked: share of the squared gradient norm (with respect to "
        "the logits) at prompt positions.",
        "masked_prompt_gradient": "Masked: largest gradient magnitude at any prompt position.",
        "completion_gradient_scale": "Norm of the unmasked loss's gradient at completion "
        "positions over the masked loss's: how much the prompt dilutes the completion's signal.",
        "parameter_gradient_cosine": "Cosine between the model's parameter gradients under the "
        "masked and the unmasked loss.",
    },
    worst_cases=(
        {
            "classes": 4096,
            "rows": 128,
            "prompt_tokens": 4096,
            "completion_tokens": 4096,
            "vocab": 128,
        },
        {
            "classes": 128,
            "rows": 4096,
            "prompt_tokens": 96,
            "completion_tokens": 32,
            "vocab": 8192,
        },
    ),
)

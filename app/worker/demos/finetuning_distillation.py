"""``distillation``: the 1/T² of soft-target gradients, and prompt masking in the SFT loss.

Distillation (Hinton, Vinyals and Dean 2015, arXiv:1503.02531, §2 and §2.1). The
student is trained to match the teacher's softened distribution p = softmax(z_t/T)
with its own q = softmax(z_s/T). The gradient of KL(p ‖ q) (equal, up to the
teacher's constant entropy, to the cross-entropy the paper writes) with respect to
one student logit is (q_i − p_i)/T. When T is large next to the logits and each
row of logits is zero-meaned, it is ≈ (z_i − v_i)/(N T²) (the paper's eq. 4): the
soft targets' gradients shrink as 1/T², so the paper multiplies the soft loss by
T² when it is mixed with the hard-label loss. Here autograd measures the gradient
norm at 11 temperatures from 1 to 100, with and without that factor.

SFT prompt masking. A sequence is one BOS token, P prompt tokens and C completion
tokens; a tiny language model (embedding → linear head, each position predicting
the next token from the current one) scores it. The labels are the input ids,
with the BOS and the prompt set to -100 when masked, and the loss is
``F.cross_entropy(..., ignore_index=-100)`` after the usual one-token shift: a
mean over the C completion targets when masked, over all P + C targets when not.
Unmasked, each completion target's gradient is scaled by C/(P + C) and the prompt
positions take about P/(P + C) of it.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import finetuning_distillation as spec
from app.demos.specs.finetuning_distillation import DistillationParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------

SERIES_TEMPERATURES = tuple(10 ** (i / 5) for i in range(11))
"""T from 1 to 100, evenly spaced in log T (ratio 10^(1/5) ≈ 1.58)."""

HIDDEN = 32
"""Width of the tiny SFT model's embedding."""

IGNORE_INDEX = -100
"""The label PyTorch's cross-entropy skips by default, and that Hugging Face uses for 'no loss'."""

LIMIT_FROM = 10.0
"""The high-temperature limit is given as theory for T ≥ LIMIT_FROM × logit_std. There it was
within 0.4% of the measured T² × gradient norm for 2 to 1000 classes (1.4% at 5 × logit_std):
the expansion's error grows with the largest logit over T, not only with the std."""

# --- distillation --------------------------------------------------------------------


def soft_target_gradient(
    student: torch.Tensor, teacher: torch.Tensor, temperature: float
) -> tuple[float, torch.Tensor]:
    """Mean KL(softmax(teacher/T) ‖ softmax(student/T)) over rows, and its gradient per row.

    The loss is summed over rows for autograd, so each row's gradient is that row's own
    (as with a batch size of one); the mean loss is returned for reading.
    """
    logits = student.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        log_q = F.log_softmax(logits / temperature, dim=-1)
        log_p = F.log_softmax(teacher / temperature, dim=-1)
        loss = F.kl_div(log_q, log_p, reduction="sum", log_target=True)
        (gradient,) = torch.autograd.grad(loss, logits)
    return loss.item() / len(student), gradient


def mean_row_norm(gradient: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(gradient, dim=-1).mean())


def hard_label_gradient(student: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Gradient of the cross-entropy at T = 1 against hard labels, per row."""
    logits = student.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        loss = F.cross_entropy(logits, labels, reduction="sum")
        (gradient,) = torch.autograd.grad(loss, logits)
    return gradient


Measured = tuple[dict[str, float], dict[str, float], list[Series]]
"""Outputs, theory and series of one half of the demo."""


def distillation(
    params: DistillationParams, generator: torch.Generator, device: torch.device
) -> Measured:
    shape = (params.rows, params.classes)
    student = torch.randn(shape, generator=generator, dtype=torch.float64, device=device)
    teacher = torch.randn(shape, generator=generator, dtype=torch.float64, device=device)
    student *= params.logit_std
    teacher *= params.logit_std
    temperature = params.temperature
    soft_loss, gradient = soft_target_gradient(student, teacher, temperature)
    soft = mean_row_norm(gradient)
    doubled = mean_row_norm(soft_target_gradient(student, teacher, 2 * temperature)[1])
    at_one = mean_row_norm(soft_target_gradient(student, teacher, 1.0)[1])
    hard = mean_row_norm(hard_label_gradient(student, teacher.argmax(dim=-1)))
    centred = (student - student.mean(dim=-1, keepdim=True)) - (
        teacher - teacher.mean(dim=-1, keepdim=True)
    )
    limit = (torch.linalg.vector_norm(centred, dim=-1) / params.classes).mean().item()
    outputs = {
        "soft_loss": soft_loss,
        "soft_grad_norm": soft,
        "soft_grad_norm_t2": soft * temperature**2,
        "soft_grad_norm_t1": at_one,
        "high_t_limit": limit,
        "grad_exponent": math.log2(doubled / soft),
        "hard_grad_norm": hard,
        "soft_over_hard": soft / hard,
        "soft_over_hard_t2": soft * temperature**2 / hard,
    }
    theory = {"high_t_limit": limit}
    if temperature >= LIMIT_FROM * params.logit_std:
        theory.update(
            soft_grad_norm=limit / temperature**2,
            soft_grad_norm_t2=limit,
            grad_exponent=-2.0,
            soft_over_hard_t2=limit / hard,
        )
    norms = [
        mean_row_norm(soft_target_gradient(student, teacher, t)[1]) for t in SERIES_TEMPERATURES
    ]
    temperatures = list(SERIES_TEMPERATURES)
    series = [
        Series(
            name="gradient norm",
            kind="line",
            x=temperatures,
            y=norms,
            x_label="temperature T",
            y_label="soft-target gradient norm",
        ),
        Series(
            name="limit / T²",
            kind="line",
            x=temperatures,
            y=[limit / t**2 for t in temperatures],
            x_label="temperature T",
            y_label="soft-target gradient norm",
        ),
        Series(
            name="T² × gradient norm",
            kind="line",
            x=temperatures,
            y=[n * t**2 for n, t in zip(norms, temperatures, strict=True)],
            x_label="temperature T",
            y_label="T² × gradient norm",
        ),
        Series(
            name="hard-label gradient norm (T = 1)",
            kind="line",
            x=temperatures,
            y=[hard] * len(temperatures),
            x_label="temperature T",
            y_label="T² × gradient norm",
        ),
    ]
    return outputs, theory, series


# --- SFT prompt masking --------------------------------------------------------------


def sft_labels(input_ids: torch.Tensor, prompt_tokens: int, *, mask_prompt: bool) -> torch.Tensor:
    """The labels of one sequence: its ids, with the BOS and (when masked) the prompt at -100.

    The BOS is never a target (nothing precedes it); after the one-token shift the
    remaining labels are the P prompt targets and the C completion targets.
    """
    labels = input_ids.clone()
    labels[: 1 + prompt_tokens if mask_prompt else 1] = IGNORE_INDEX
    return labels


def sft_loss(
    embedding: torch.Tensor, head: torch.Tensor, input_ids: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Shifted next-token cross-entropy with ``ignore_index=-100``, and the logits it used."""
    logits = embedding[input_ids[:-1]] @ head.T
    loss = F.cross_entropy(logits, labels[1:], ignore_index=IGNORE_INDEX)
    return loss, logits


def masking_effect(
    embedding: torch.Tensor, head: torch.Tensor, input_ids: torch.Tensor, prompt_tokens: int
) -> dict[str, float]:
    """Both losses with autograd: their values, and where their gradients fall.

    The gradients are taken with respect to the logits (to see which positions they
    reach) and to the model's two weight matrices (to compare the updates).
    """
    gradients: list[torch.Tensor] = []
    logit_gradients: list[torch.Tensor] = []
    losses: list[float] = []
    for mask_prompt in (True, False):
        labels = sft_labels(input_ids, prompt_tokens, mask_prompt=mask_prompt)
        with torch.enable_grad():
            loss, logits = sft_loss(embedding, head, input_ids, labels)
            at_logits, at_embedding, at_head = torch.autograd.grad(loss, (logits, embedding, head))
        losses.append(loss.item())
        logit_gradients.append(at_logits)
        gradients.append(torch.cat([at_embedding.flatten(), at_head.flatten()]))
    masked, unmasked = logit_gradients
    prompt, completion = slice(0, prompt_tokens), slice(prompt_tokens, None)
    squared = torch.linalg.vector_norm(unmasked, dim=-1) ** 2
    per_target = F.cross_entropy(
        embedding.detach()[input_ids[:-1]] @ head.detach().T, input_ids[1:], reduction="none"
    )
    return {
        "masked_loss": losses[0],
        "unmasked_loss": losses[1],
        "prompt_loss": per_target[prompt].mean().item() if prompt_tokens else math.nan,
        "completion_loss": per_target[completion].mean().item(),
        "prompt_gradient_share": (squared[prompt].sum() / squared.sum()).item(),
        "masked_prompt_gradient": masked[prompt].abs().max().item() if prompt_tokens else 0.0,
        "completion_gradient_scale": (
            torch.linalg.vector_norm(unmasked[completion]) / torch.linalg.vector_norm(masked)
        ).item(),
        "parameter_gradient_cosine": F.cosine_similarity(gradients[0], gradients[1], dim=0).item(),
    }


def prompt_masking(
    params: DistillationParams, generator: torch.Generator, device: torch.device
) -> Measured:
    vocab, p, c = params.vocab, params.prompt_tokens, params.completion_tokens
    embedding = torch.randn(vocab, HIDDEN, generator=generator, dtype=torch.float64, device=device)
    head = torch.randn(vocab, HIDDEN, generator=generator, dtype=torch.float64, device=device)
    head /= math.sqrt(HIDDEN)  # logits of unit variance
    embedding.requires_grad_(True)
    head.requires_grad_(True)
    # Token 0 is the BOS; the prompt and the completion draw from the rest (all 1 when V = 2).
    body = 1 + torch.randint(vocab - 1, (p + c,), generator=generator, device=device)
    bos = torch.zeros(1, dtype=body.dtype, device=device)
    input_ids = torch.cat([bos, body])
    measured = masking_effect(embedding, head, input_ids, p)
    outputs = {
        **{k: v for k, v in measured.items() if not math.isnan(v)},
        "loss_targets": float((sft_labels(input_ids, p, mask_prompt=True)[1:] != -100).sum()),
        "prompt_target_share": p / (p + c),
    }
    theory = {
        "loss_targets": float(c),
        "prompt_target_share": p / (p + c),
        "prompt_gradient_share": p / (p + c),
        "masked_prompt_gradient": 0.0,
        "completion_gradient_scale": c / (p + c),
    }
    # The series: the first p' prompt tokens, the same completion, p' from 0 to P.
    lengths = sorted({round(p * i / 4) for i in range(5)})
    shares, scales, masked_losses, unmasked_losses = [], [], [], []
    for length in lengths:
        ids = torch.cat([bos, body[:length], body[p:]])
        effect = masking_effect(embedding, head, ids, length)
        shares.append(effect["prompt_gradient_share"])
        scales.append(effect["completion_gradient_scale"])
        masked_losses.append(effect["masked_loss"])
        unmasked_losses.append(effect["unmasked_loss"])
    x = [float(length) for length in lengths]

    def line(name: str, y: list[float], y_label: str) -> Series:
        return Series(name=name, kind="line", x=x, y=y, x_label="prompt tokens", y_label=y_label)

    share_label = "share of the unmasked gradient"
    series = [
        line("prompt's share of ‖∂L/∂logits‖²", shares, share_label),
        line("P / (P + C)", [n / (n + c) for n in lengths], share_label),
        line("completion gradient, unmasked / masked", scales, share_label),
        line("C / (P + C)", [c / (n + c) for n in lengths], share_label),
        line("masked (completion only)", masked_losses, "cross-entropy (nats)"),
        line("unmasked (every target)", unmasked_losses, "cross-entropy (nats)"),
    ]
    return outputs, theory, series


# --- compute -------------------------------------------------------------------------


def compute(params: DistillationParams, device: torch.device) -> Outcome:
    """Measure both effects with autograd, in fp64 (autograd needs inference mode off)."""
    generator = seeded(device, params.seed)
    with torch.inference_mode(False):
        soft_outputs, soft_theory, soft_series = distillation(params, generator, device)
        sft_outputs, sft_theory, sft_series = prompt_masking(params, generator, device)
    return Outcome(
        outputs={**soft_outputs, **sft_outputs},
        theory={**soft_theory, **sft_theory},
        series=soft_series + sft_series,
        notes=[
            "Soft targets: the gradient of KL(softmax(z_t/T) ‖ softmax(z_s/T)) with respect to "
            "z_s is (softmax(z_s/T) − softmax(z_t/T))/T; for T large next to the logits it is "
            "≈ (centred z_s − centred z_t)/(N T²) (Hinton et al. 2015, §2.1, eq. 4). Hence the "
            "T² on the soft loss when it is mixed with a hard-label loss (§2).",
            "SFT: labels of -100 are skipped by F.cross_entropy (ignore_index) and the mean "
            "divides by the targets that remain. The tiny model is an embedding and a linear "
            f"head of width {HIDDEN}; each position predicts the next token from its own.",
        ],
    )


# --- the demo ------------------------------------------------------------------------

DISTILLATION = Demo(spec=spec.DISTILLATION, compute=compute)

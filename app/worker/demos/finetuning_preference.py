"""``preference_losses``: the losses and estimators of preference fine-tuning, computed by torch.

Four pieces, each computed the way training code computes it and set beside a
closed form:

- **Bradley–Terry reward-model loss** ``−log σ(r_w − r_l)`` (InstructGPT §3.5,
  DPO Eq. 2), by autograd on two scalar rewards: ln 2 and gradients ∓½ when
  the rewards are equal, as a freshly initialised reward head scores them.
- **DPO** (Rafailov et al. 2023, §4, Eq. 7): a toy token-level policy, one
  categorical distribution of logits per position (no context), starts equal to
  its reference; one chosen and one rejected response are sampled from the
  reference. The loss is ``−log σ(β[(log π_θ(y_w) − log π_ref(y_w)) −
  (log π_θ(y_l) − log π_ref(y_l))])``: ln 2 at the reference, where its
  gradient with respect to the logits is ``−β/2 (e(y_w) − e(y_l))`` per position
  (the softmax terms cancel), of norm ``β √(d/2)`` with d the positions where the
  responses differ. Then ``steps`` of gradient descent on the logits.
- **KL estimators** (Schulman 2020, "Approximating KL divergence"): tokens x drawn
  from the policy π_θ, r = π_ref(x)/π_θ(x); k1 = −log r, k2 = (log r)²/2,
  k3 = (r − 1) − log r, against the exact KL(π_θ ‖ π_ref) summed over the
  vocabulary. The exact mean and spread of each estimator are sums over the
  vocabulary too, and are the theory.
- **GRPO advantages** (Shao et al. 2024, §4.1.2, outcome supervision): 0/1
  rewards for G completions per prompt, ``(r_i − mean) / std`` within each group,
  std with Bessel's correction as ``torch.std`` (and TRL's GRPOTrainer) computes it.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import finetuning_preference as spec
from app.demos.specs.finetuning_preference import PreferenceLossesParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

F64 = torch.float64
DPO_PART, KL_PART, GRPO_PART = 1, 2, 3  # each part draws from generator seed · 4 + part

# --- Bradley–Terry --------------------------------------------------------------------------


def bradley_terry(margin: float, device: torch.device) -> dict[str, float]:
    """Loss −log σ(r_w − r_l) and its gradients, by autograd, for r_w − r_l = ``margin``.

    Example:
        >>> out = bradley_terry(0.0, torch.device("cpu"))
        >>> round(out["bt_loss"], 6), out["bt_grad_chosen"], out["bt_grad_rejected"]
        (0.693147, -0.5, 0.5)
    """
    with torch.inference_mode(False), torch.enable_grad():
        chosen = torch.tensor(margin, dtype=F64, device=device, requires_grad=True)
        rejected = torch.tensor(0.0, dtype=F64, device=device, requires_grad=True)
        loss = -F.logsigmoid(chosen - rejected)
        grad_chosen, grad_rejected = torch.autograd.grad(loss, (chosen, rejected))
        return {
            "bt_loss": loss.item(),
            "bt_prob_chosen": torch.sigmoid(chosen - rejected).item(),
            "bt_grad_chosen": grad_chosen.item(),
            "bt_grad_rejected": grad_rejected.item(),
        }


# --- DPO ------------------------------------------------------------------------------------


def sequence_logp(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """log π(y): the sum over positions of log softmax(logits[t])[y_t]."""
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, None]).sum()


def dpo_loss(
    policy: torch.Tensor,
    reference: torch.Tensor,
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    beta: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """DPO's Eq. 7 for one pair: the loss and the two implicit rewards β log(π_θ/π_ref)."""
    chosen_reward = beta * (sequence_logp(policy, chosen) - sequence_logp(reference, chosen))
    rejected_reward = beta * (sequence_logp(policy, rejected) - sequence_logp(reference, rejected))
    return -F.logsigmoid(chosen_reward - rejected_reward), chosen_reward, rejected_reward


def run_dpo(
    params: PreferenceLossesParams, generator: torch.Generator, device: torch.device
) -> tuple[dict[str, float], dict[str, float], list[Series]]:
    """Sample a pair from the reference, measure the loss there, then take gradient steps."""
    t, v, beta = params.response_tokens, params.vocab, params.beta
    losses, margins = [], []
    with torch.inference_mode(False), torch.enable_grad():
        # Created outside inference mode: autograd may save them for the backward pass.
        reference = torch.randn(t, v, generator=generator, dtype=F64, device=device)
        pair = torch.multinomial(
            torch.softmax(reference, -1), 2, replacement=True, generator=generator
        )
        chosen, rejected = pair[:, 0], pair[:, 1]
        differing = int((chosen != rejected).sum().item())
        policy = reference.clone().requires_grad_(True)
        for step in range(params.steps + 1):
            loss, chosen_reward, rejected_reward = dpo_loss(
                policy, reference, chosen, rejected, beta
            )
            (grad,) = torch.autograd.grad(loss, policy)
            losses.append(loss.item())
            margins.append((chosen_reward - rejected_reward).item())
            if step == 0:
                loss_init, grad_norm_init = loss.item(), grad.norm().item()
            if step < params.steps:
                with torch.no_grad():
                    policy -= params.learning_rate * grad
    margin = margins[-1]
    outputs = {
        "dpo_loss_init": loss_init,
        "dpo_grad_norm_init": grad_norm_init,
        "dpo_grad_norm_over_beta": grad_norm_init / beta,
        "dpo_loss": losses[-1],
        "dpo_chosen_reward": chosen_reward.item(),
        "dpo_rejected_reward": rejected_reward.item(),
        "dpo_reward_margin": margin,
        "dpo_log_ratio_margin": margin / beta,
        "dpo_gradient_weight": torch.sigmoid(torch.tensor(-margin, dtype=F64)).item(),
    }
    theory = {
        "dpo_loss_init": math.log(2),
        "dpo_grad_norm_init": beta * math.sqrt(differing / 2),
        "dpo_grad_norm_over_beta": math.sqrt(differing / 2),
    }
    steps_axis = [float(s) for s in range(params.steps + 1)]
    series = [
        Series(
            name=f"DPO loss, β = {beta:g}",
            kind="line",
            x=steps_axis,
            y=losses,
            x_label="gradient steps",
            y_label="loss (nats)",
        ),
        Series(
            name="ln 2 (policy = reference)",
            kind="line",
            x=steps_axis,
            y=[math.log(2)] * len(steps_axis),
            x_label="gradient steps",
            y_label="loss (nats)",
        ),
        Series(
            name="implicit reward margin β·Δlog-ratio",
            kind="line",
            x=steps_axis,
            y=margins,
            x_label="gradient steps",
            y_label="reward margin",
        ),
    ]
    return outputs, theory, series


# --- KL estimators --------------------------------------------------------------------------


def estimator_values(log_r: torch.Tensor) -> dict[str, torch.Tensor]:
    """k1, k2, k3 at each log r = log π_ref(x) − log π_θ(x) (Schulman 2020).

    Example:
        >>> values = estimator_values(torch.tensor([0.0, -1.0], dtype=torch.float64))
        >>> [round(x, 6) for x in values["k3"].tolist()]
        [0.0, 0.367879]
    """
    return {"k1": -log_r, "k2": log_r.square() / 2, "k3": torch.expm1(log_r) - log_r}


def exact_moments(log_policy: torch.Tensor, log_ref: torch.Tensor) -> dict[str, float]:
    """KL(π_θ ‖ π_ref) and each estimator's exact mean and standard deviation under π_θ."""
    p = log_policy.exp()
    kl = (p * (log_policy - log_ref)).sum().item()
    moments = {"kl": kl}
    for name, values in estimator_values(log_ref - log_policy).items():
        mean = (p * values).sum().item()
        second = (p * values.square()).sum().item()
        moments[f"{name}_mean"] = mean
        moments[f"{name}_std"] = math.sqrt(max(second - mean * mean, 0.0))
    moments["k1_negative"] = p[log_ref > log_policy].sum().item()
    return moments


def kl_distributions(
    vocab: int, shift: float, generator: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of π_ref (standard normal logits) and π_θ (those plus σ·noise)."""
    ref_logits = torch.randn(vocab, generator=generator, dtype=F64, device=device)
    noise = torch.randn(vocab, generator=generator, dtype=F64, device=device)
    return torch.log_softmax(ref_logits + shift * noise, -1), torch.log_softmax(ref_logits, -1)


def run_kl(
    params: PreferenceLossesParams, generator: torch.Generator, device: torch.device
) -> tuple[dict[str, float], dict[str, float], list[Series]]:
    """Draw tokens from π_θ and average k1, k2, k3 over them; compare with the exact sums."""
    log_policy, log_ref = kl_distributions(params.vocab, params.kl_shift, generator, device)
    tokens = torch.multinomial(
        log_policy.exp(), params.kl_samples, replacement=True, generator=generator
    )
    log_r = log_ref[tokens] - log_policy[tokens]
    exact = exact_moments(log_policy, log_ref)
    outputs: dict[str, float] = {"kl_exact": exact["kl"]}
    theory: dict[str, float] = {}
    for name, values in estimator_values(log_r).items():
        mean = values.mean().item()
        outputs[f"{name}_mean"] = mean
        outputs[f"{name}_bias"] = mean - exact["kl"]
        outputs[f"{name}_std"] = values.std().item()
        theory[f"{name}_mean"] = exact[f"{name}_mean"]
        theory[f"{name}_bias"] = exact[f"{name}_mean"] - exact["kl"]
        theory[f"{name}_std"] = exact[f"{name}_std"]
    outputs["k1_negative_share"] = (log_r > 0).double().mean().item()
    theory["k1_negative_share"] = exact["k1_negative"]

    # Exact bias against the shift, on the same reference logits and noise direction.
    shifts = [params.kl_shift * i / 10 for i in range(1, 11)] if params.kl_shift > 0 else [0.0]
    curve = []
    for shift in shifts:
        again = part_generator(device, params.seed, KL_PART)
        curve.append(exact_moments(*kl_distributions(params.vocab, shift, again, device)))
    x = [c["kl"] for c in curve]
    series = [
        Series(
            name="standard deviation of one sample",
            kind="bar",
            x=["k1", "k2", "k3"],
            y=[outputs[f"{k}_std"] for k in ("k1", "k2", "k3")],
            x_label="estimator",
            y_label="std of one sample",
        ),
        *(
            Series(
                name=f"E[{name}] − KL",
                kind="line",
                x=x,
                y=[c[f"{name}_mean"] - c["kl"] for c in curve],
                x_label="exact KL(π_θ ‖ π_ref)",
                y_label="bias (exact)",
            )
            for name in ("k1", "k2", "k3")
        ),
    ]
    return outputs, theory, series


# --- GRPO -----------------------------------------------------------------------------------


def group_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """(r_i − mean) / std within each row (a group), std with Bessel's correction; 0 if all equal.

    Example:
        >>> group_advantages(torch.tensor([[1.0, 0.0, 0.0, 0.0]], dtype=torch.float64))
        tensor([[ 1.5000, -0.5000, -0.5000, -0.5000]], dtype=torch.float64)
    """
    centred = rewards - rewards.mean(-1, keepdim=True)
    std = rewards.std(-1, keepdim=True)
    return torch.where(std > 0, centred / torch.where(std > 0, std, 1.0), 0.0)


def binary_group_advantages(correct: int, size: int) -> tuple[float, float]:
    """Closed form: advantages of a 1 and of a 0 in a group with ``correct`` ones of ``size``."""
    if correct in (0, size):
        return 0.0, 0.0
    share = correct / size
    std = math.sqrt(size / (size - 1) * share * (1 - share))
    return (1 - share) / std, -share / std


def run_grpo(
    params: PreferenceLossesParams, generator: torch.Generator, device: torch.device
) -> tuple[dict[str, float], dict[str, float], list[Series]]:
    """Draw 0/1 rewards for each group and normalise them within the group."""
    size, p = params.group_size, params.success_rate
    draws = torch.rand(params.groups, size, generator=generator, dtype=F64, device=device)
    rewards = (draws < p).to(F64)
    advantages = group_advantages(rewards)
    degenerate = rewards.std(-1) == 0
    live = advantages[~degenerate]
    first = rewards[0]
    first_correct = int(first.sum().item())
    right = advantages[0][first == 1]
    wrong = advantages[0][first == 0]
    outputs = {
        "grpo_advantage_mean": advantages.mean().item(),
        "grpo_advantage_std": live.std(-1).mean().item() if live.numel() else 0.0,
        "grpo_first_group_correct_advantage": right[0].item() if right.numel() else 0.0,
        "grpo_first_group_wrong_advantage": wrong[0].item() if wrong.numel() else 0.0,
        "grpo_zero_signal_share": degenerate.double().mean().item(),
    }
    closed = binary_group_advantages(first_correct, size)
    theory = {
        "grpo_advantage_mean": 0.0,
        "grpo_first_group_correct_advantage": closed[0] if right.numel() else 0.0,
        "grpo_first_group_wrong_advantage": closed[1] if wrong.numel() else 0.0,
        "grpo_zero_signal_share": p**size + (1 - p) ** size,
    }
    if live.numel():
        theory["grpo_advantage_std"] = 1.0
    ks = list(range(size + 1))
    series = [
        Series(
            name=f"advantage of a correct completion, G = {size}",
            kind="line",
            x=[float(k) for k in ks],
            y=[binary_group_advantages(k, size)[0] for k in ks],
            x_label="correct completions in the group",
            y_label="advantage",
        ),
        Series(
            name=f"advantage of a wrong completion, G = {size}",
            kind="line",
            x=[float(k) for k in ks],
            y=[binary_group_advantages(k, size)[1] for k in ks],
            x_label="correct completions in the group",
            y_label="advantage",
        ),
    ]
    return outputs, theory, series


# --- compute --------------------------------------------------------------------------------


def part_generator(device: torch.device, seed: int, part: int) -> torch.Generator:
    """The generator of one part (DPO, KL, GRPO): its draws do not depend on the others'."""
    return seeded(device, seed * 4 + part)


def compute(params: PreferenceLossesParams, device: torch.device) -> Outcome:
    """Bradley–Terry, DPO, the KL estimators and GRPO, each from its own draws of one seed."""
    outputs = bradley_terry(params.reward_margin, device)
    theory = {
        "bt_loss": math.log1p(math.exp(-params.reward_margin)),
        "bt_prob_chosen": 1 / (1 + math.exp(-params.reward_margin)),
        "bt_grad_chosen": -1 / (1 + math.exp(params.reward_margin)),
        "bt_grad_rejected": 1 / (1 + math.exp(params.reward_margin)),
    }
    margins = [m / 2 for m in range(-12, 13)]
    series = [
        Series(
            name="Bradley–Terry loss −log σ(r_w − r_l)",
            kind="line",
            x=margins,
            y=[bradley_terry(m, device)["bt_loss"] for m in margins],
            x_label="reward margin r_w − r_l",
            y_label="loss (nats)",
        )
    ]
    notes = [
        "DPO's policy here is one categorical distribution per position with no context: "
        "enough to show the loss, its gradient and β, not how a language model generalises.",
        "The KL estimators sample tokens from π_θ and use r = π_ref/π_θ at each one, as "
        "Schulman's note and GRPO's KL term do; kl_exact sums over the whole vocabulary.",
        "GRPO's std uses Bessel's correction (torch.std, as TRL's GRPOTrainer); a group whose "
        "rewards are all equal gets advantage 0 here (TRL adds 1e-4 to the std instead).",
    ]
    for number, part in ((DPO_PART, run_dpo), (KL_PART, run_kl), (GRPO_PART, run_grpo)):
        out, th, se = part(params, part_generator(device, params.seed, number), device)
        outputs.update(out)
        theory.update(th)
        series.extend(se)
    return Outcome(outputs=outputs, theory=theory, series=series, notes=notes)


# --- the demo -------------------------------------------------------------------------------

PREFERENCE_LOSSES = Demo(spec=spec.PREFERENCE_LOSSES, compute=compute)

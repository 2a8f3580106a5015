"""``adam_decay``: Adam + L2 against AdamW, and Adam's bias correction, from real optimizer steps.

Three runs take ``steps`` real steps on three weights that start at 1: plain
``torch.optim.Adam`` without decay, ``Adam`` with ``weight_decay=λ`` (a second
parameter group of the same optimizer) and ``AdamW(weight_decay=λ)``. The loss
gradient of weight i at step t is ``scale_i · ξ_t`` (one zero-mean draw ξ_t per
step, shared), with scales ``small_grad``, 1 and ``large_grad``: a linear loss,
so the gradient does not depend on the weight and the three runs see the same one.

Loshchilov & Hutter (arXiv:1711.05101, §2, Algorithm 2): Adam's L2 term adds
λθ to the gradient, so it goes through the moments and is divided by
sqrt(v̂) + ε like the loss gradient: a weight with large gradients barely
decays, one with none is pulled by about lr per step whatever λ. AdamW (in
PyTorch ``param.mul_(1 - lr * weight_decay)``) shrinks every weight by the
same factor 1 − lr·λ. The decay a step applies is measured as the extra
movement towards zero against the run without decay, on the same gradients.

Kingma & Ba (arXiv:1412.6980, Algorithm 1, §3): m and v start at 0, so with a
constant gradient g, m_t = g(1 − β₁ᵗ) and v_t = g²(1 − β₂ᵗ). A fourth weight
with that gradient rides in the no-decay parameter group; its ``exp_avg`` and
``exp_avg_sq`` are read from ``optimizer.state`` after every step. Without the
correction m_t / sqrt(v_t) = sign(g)(1 − β₁ᵗ) / sqrt(1 − β₂ᵗ): 3.16 at step 1
for the default betas; with it, exactly sign(g).
"""

from dataclasses import dataclass

import torch
from torch import nn

from app.demos.specs import training_adam_decay as spec
from app.demos.specs.training_adam_decay import AdamDecayParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------

RUNS = ("none", "l2", "adamw")
WEIGHTS = ("small", "unit", "large")
MAX_POINTS = 500
"""Points per chart line: the steps are thinned to at most this many."""

SETTLED = 0.01
"""A moment or ratio has settled once it is within 1% of its target."""


# --- compute -------------------------------------------------------------------------


@dataclass(frozen=True)
class History:
    """What the runs recorded after every step (float64, on the CPU)."""

    weights: torch.Tensor
    """(steps + 1, run, weight): the weights before the first step and after each."""
    l2_exp_avg_sq: torch.Tensor
    """(steps, weight): the Adam + L2 run's ``exp_avg_sq`` after each step."""
    exp_avg: torch.Tensor
    """(steps,): ``exp_avg`` of the constant-gradient weight after each step."""
    exp_avg_sq: torch.Tensor
    """(steps,): its ``exp_avg_sq``."""
    constant_weight: torch.Tensor
    """(steps + 1,): that weight, starting at 0."""


def optimizers(
    params: AdamDecayParams, weights: list[nn.Parameter], constant: nn.Parameter
) -> tuple[torch.optim.Adam, torch.optim.AdamW]:
    """``Adam`` with two parameter groups, ``weight_decay`` 0 (it also steps the
    constant-gradient weight) and λ (L2), and ``AdamW`` with λ.

    One ``Adam`` for the first two runs saves a ``step()`` call's overhead per
    step; each group is updated with its own ``weight_decay``, as two optimizers
    would.
    """
    lr, betas, eps = params.lr, (params.beta1, params.beta2), params.eps
    adam = torch.optim.Adam(
        [
            {"params": [weights[0], constant], "weight_decay": 0.0},
            {"params": [weights[1]], "weight_decay": params.weight_decay},
        ],
        lr=lr,
        betas=betas,
        eps=eps,
    )
    adamw = torch.optim.AdamW(
        [weights[2]], lr=lr, betas=betas, eps=eps, weight_decay=params.weight_decay
    )
    return adam, adamw


def run_steps(params: AdamDecayParams, device: torch.device) -> History:
    """Take ``steps`` real optimizer steps in every run, recording weights and moments."""
    f64, steps = torch.float64, params.steps
    generator = seeded(device, params.seed)
    with torch.inference_mode(False), torch.no_grad():
        # fp32 draws, as torch.randn(steps) gives them, widened to fp64 for the runs.
        noise = torch.randn(steps, generator=generator, device=device).to(f64)
        scales = torch.tensor([params.small_grad, 1.0, params.large_grad], dtype=f64, device=device)
        grads = noise[:, None] * scales
        weights = [nn.Parameter(torch.ones(3, dtype=f64, device=device)) for _ in RUNS]
        constant = nn.Parameter(torch.zeros(1, dtype=f64, device=device))
        constant_grad = torch.full((1,), params.constant_grad, dtype=f64, device=device)
        adam, adamw = optimizers(params, weights, constant)
        history = torch.empty(steps + 1, len(RUNS), 3, dtype=f64, device=device)
        history[0] = 1.0
        moments = torch.empty(steps, 2, dtype=f64, device=device)
        l2_sq = torch.empty(steps, 3, dtype=f64, device=device)
        constant_history = torch.zeros(steps + 1, dtype=f64, device=device)
        for t in range(steps):
            for weight in weights:
                weight.grad = grads[t]
            constant.grad = constant_grad
            adam.step()
            adamw.step()
            torch.stack(tuple(weights), out=history[t + 1])
            l2_sq[t].copy_(adam.state[weights[1]]["exp_avg_sq"])
            state = adam.state[constant]
            torch.cat([state["exp_avg"], state["exp_avg_sq"]], out=moments[t])
            constant_history[t + 1].copy_(constant[0])
    return History(
        weights=history.cpu(),
        l2_exp_avg_sq=l2_sq.cpu(),
        exp_avg=moments[:, 0].cpu(),
        exp_avg_sq=moments[:, 1].cpu(),
        constant_weight=constant_history.cpu(),
    )


def shrink_per_step(weights: torch.Tensor) -> torch.Tensor:
    """Least-squares share of each weight the decay removes per step, per decayed run.

    The decay's part of step t is the extra movement towards zero against the
    run without decay (same gradients); the share is the slope of that against
    the weight before the step, Σ decay·θ / Σ θ², so steps where θ is near
    zero weigh little. Returns (run, weight) for the runs after the first.

    Example:
        >>> w = torch.tensor([[[1.0], [1.0]], [[1.0], [0.9]], [[1.0], [0.81]]], dtype=torch.float64)
        >>> shrink_per_step(w)
        tensor([[0.1000]], dtype=torch.float64)
    """
    moves = weights[:-1] - weights[1:]
    decay = moves[:, 1:] - moves[:, :1]
    before = weights[:-1, 1:]
    result: torch.Tensor = (decay * before).sum(0) / (before * before).sum(0)
    return result


def l2_theory(params: AdamDecayParams, history: History) -> torch.Tensor:
    """lr·λ / (sqrt(v̂_t) + ε) per weight, with v̂ from the Adam + L2 run's state, averaged
    with the same θ² weights as :func:`shrink_per_step`."""
    t = torch.arange(1, params.steps + 1, dtype=torch.float64)
    v_hat = history.l2_exp_avg_sq / (1 - params.beta2**t)[:, None]
    per_step = params.lr * params.weight_decay / (v_hat.sqrt() + params.eps)
    before = history.weights[:-1, 1] ** 2
    result: torch.Tensor = (per_step * before).sum(0) / before.sum(0)
    return result


def decay_results(params: AdamDecayParams, history: History) -> Outcome:
    """Per-step shrink of every weight in the two decayed runs, and every final weight."""
    shrink = shrink_per_step(history.weights)
    l2 = l2_theory(params, history)
    outputs: dict[str, float] = {}
    theory: dict[str, float] = {}
    for i, name in enumerate(WEIGHTS):
        outputs[f"l2_shrink_{name}"] = shrink[0, i].item()
        outputs[f"adamw_shrink_{name}"] = shrink[1, i].item()
        theory[f"l2_shrink_{name}"] = l2[i].item()
        theory[f"adamw_shrink_{name}"] = params.lr * params.weight_decay
        for r, run in enumerate(RUNS):
            outputs[f"final_{run}_{name}"] = history.weights[-1, r, i].item()
    return Outcome(outputs=outputs, theory=theory)


def first_step(condition: torch.Tensor) -> int | None:
    """1-based index of the first True, or None.

    Example:
        >>> first_step(torch.tensor([False, False, True])), first_step(torch.tensor([False]))
        (3, None)
    """
    hits = condition.nonzero()
    return int(hits[0, 0].item()) + 1 if len(hits) else None


def settled_from(close: torch.Tensor) -> int | None:
    """1-based first step from which ``close`` holds to the end, or None if the last fails.

    Example:
        >>> settled_from(torch.tensor([True, False, True, True]))
        3
        >>> settled_from(torch.tensor([True, False])) is None
        True
    """
    if not bool(close[-1]):
        return None
    misses = (~close).nonzero()
    return int(misses[-1, 0].item()) + 2 if len(misses) else 1


def bias_results(params: AdamDecayParams, history: History) -> Outcome:
    """The constant-gradient weight's moments and step ratios against their closed forms."""
    g, b1, b2 = params.constant_grad, params.beta1, params.beta2
    t = torch.arange(1, params.steps + 1, dtype=torch.float64)
    m, v = history.exp_avg / g, history.exp_avg_sq / g**2  # shares of g and g²
    m_closed, v_closed = 1 - b1**t, 1 - b2**t
    ratio, ratio_closed = m / v.sqrt(), m_closed / v_closed.sqrt()
    corrected = (m / m_closed) / (v / v_closed).sqrt()
    updates = (history.constant_weight[:-1] - history.constant_weight[1:]) / params.lr
    peak = int(ratio.argmax().item())
    outputs = {
        "exp_avg_first": m[0].item(),
        "exp_avg_sq_first": v[0].item(),
        "exp_avg_last": m[-1].item(),
        "exp_avg_sq_last": v[-1].item(),
        "uncorrected_ratio_first": ratio[0].item(),
        "uncorrected_ratio_peak": ratio[peak].item(),
        "uncorrected_peak_step": float(peak + 1),
        "uncorrected_ratio_last": ratio[-1].item(),
        "corrected_ratio_max_deviation": (corrected - 1).abs().max().item(),
        "update_over_lr_first": updates[0].item(),
        "update_over_lr_last": updates[-1].item(),
    }
    step_update = g / (abs(g) + params.eps)
    theory = {
        "exp_avg_first": 1 - b1,
        "exp_avg_sq_first": 1 - b2,
        "exp_avg_last": m_closed[-1].item(),
        "exp_avg_sq_last": v_closed[-1].item(),
        "uncorrected_ratio_first": (1 - b1) / (1 - b2) ** 0.5,
        "uncorrected_ratio_peak": ratio_closed.max().item(),
        "uncorrected_peak_step": float(int(ratio_closed.argmax().item()) + 1),
        "uncorrected_ratio_last": ratio_closed[-1].item(),
        "corrected_ratio_max_deviation": 0.0,
        "update_over_lr_first": step_update,
        "update_over_lr_last": step_update,
    }
    for name, measured, closed in (
        ("exp_avg_settled_step", first_step(m > 1 - SETTLED), first_step(m_closed > 1 - SETTLED)),
        (
            "exp_avg_sq_settled_step",
            first_step(v > 1 - SETTLED),
            first_step(v_closed > 1 - SETTLED),
        ),
        (
            "uncorrected_settled_step",
            settled_from((ratio - 1).abs() < SETTLED),
            settled_from((ratio_closed - 1).abs() < SETTLED),
        ),
    ):
        if measured is not None:
            outputs[name] = float(measured)
            if closed is not None:
                theory[name] = float(closed)
    return Outcome(outputs=outputs, theory=theory)


def thinned(steps: int) -> torch.Tensor:
    """At most :data:`MAX_POINTS` indices from 0 to ``steps``, both ends included.

    Example:
        >>> thinned(3).tolist(), len(thinned(5000))
        ([0, 1, 2, 3], 500)
    """
    indices = torch.linspace(0, steps, min(steps + 1, MAX_POINTS)).round().long()
    result: torch.Tensor = torch.unique_consecutive(indices)
    return result


def charts(params: AdamDecayParams, history: History) -> list[Series]:
    """Weights over the steps; the moments and the step ratio against their closed forms."""
    at = thinned(params.steps)
    x = at.tolist()
    series = [
        Series(
            name=f"{label}, {name} gradient",
            kind="line",
            x=x,
            y=history.weights[at, r, i].tolist(),
            x_label="step",
            y_label="weight",
        )
        for r, label in ((1, "Adam + L2"), (2, "AdamW"))
        for i, name in enumerate(WEIGHTS)
    ]
    g, b1, b2 = params.constant_grad, params.beta1, params.beta2
    steps = at[at > 0]
    t = steps.to(torch.float64)
    m, v = history.exp_avg[steps - 1] / g, history.exp_avg_sq[steps - 1] / g**2
    lines = {
        ("exp_avg / g", "share of the true moment"): m,
        ("1 − β₁^t", "share of the true moment"): 1 - b1**t,
        ("exp_avg_sq / g²", "share of the true moment"): v,
        ("1 − β₂^t", "share of the true moment"): 1 - b2**t,
        ("m / sqrt(v), uncorrected", "step / lr (× sign g)"): m / v.sqrt(),
        ("(1 − β₁^t) / sqrt(1 − β₂^t)", "step / lr (× sign g)"): (1 - b1**t) / (1 - b2**t).sqrt(),
        ("m̂ / sqrt(v̂), corrected", "step / lr (× sign g)"): (m / (1 - b1**t))
        / (v / (1 - b2**t)).sqrt(),
    }
    series += [
        Series(name=name, kind="line", x=steps.tolist(), y=y.tolist(), x_label="step", y_label=unit)
        for (name, unit), y in lines.items()
    ]
    return series


NOTES = [
    "Every weight starts at 1; its loss gradient is zero-mean noise times its scale, the same "
    "draw for all three (a linear loss: the gradient does not depend on the weight).",
    "Shrink per step: the decay's extra step towards zero, against Adam without decay on the "
    "same gradients, as a least-squares share of the weight before the step.",
    "Adam + L2 theory takes v̂ from the optimizer's state and leaves out that m̂ averages λθ "
    "over the last 1/(1 − β₁) steps: approximate for a weight the decay drives to zero.",
    "Sources: Loshchilov & Hutter, arXiv:1711.05101 §2 (Algorithm 2); Kingma & Ba, "
    "arXiv:1412.6980 Algorithm 1 and §3.",
]


def compute(params: AdamDecayParams, device: torch.device) -> Outcome:
    """Run the three optimizers and read the bias correction from the state."""
    history = run_steps(params, device)
    decay, bias = decay_results(params, history), bias_results(params, history)
    return Outcome(
        outputs={**decay.outputs, **bias.outputs},
        theory={**decay.theory, **bias.theory},
        series=charts(params, history),
        notes=NOTES,
    )


# --- the demo ------------------------------------------------------------------------

ADAM_DECAY = Demo(spec=spec.ADAM_DECAY, compute=compute)

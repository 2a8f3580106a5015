"""``speculative_sampling``: Algorithm 1 of Leviathan et al. 2023 on two categorical distributions.

The target p is the softmax of ``logit_scale`` × N(0, 1) logits; the draft q
the softmax of the same logits plus ``draft_noise`` × N(0, 1), divided by
``draft_temperature``. Every position has the same p and q (no context), so
the i.i.d. assumption behind the paper's Eq. 1 holds exactly and the emitted
tokens should be independent draws from p.

One target pass (arXiv:2211.17192, §2.3 and Algorithm 1; Chen et al.,
arXiv:2302.01318, Algorithm 2): γ tokens drawn from q; token x kept with
probability min(1, p(x)/q(x)) (a uniform coin below p/q); everything after the
first rejection dropped; the rejected position replaced by a draw from
norm(max(0, p − q)), or, when all γ were kept, one bonus token drawn from p.
The biased variant uses the same drafts and coins but replaces a rejected
token with a draw from p.
"""

import math

import torch
from scipy.stats import chisquare  # type: ignore[import-untyped]

from app.demos.specs import inference_speculative as spec
from app.demos.specs.inference_speculative import SpeculativeSamplingParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

F64 = torch.float64
MIN_EXPECTED = 5.0
"""Cells expected fewer times than this are pooled before the chi-square test (the usual rule)."""


def distributions(
    params: SpeculativeSamplingParams, generator: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The target p and the draft q, drawn first so that γ and passes do not change them."""
    logits = params.logit_scale * torch.randn(
        params.vocab, generator=generator, dtype=F64, device=device
    )
    noise = torch.randn(params.vocab, generator=generator, dtype=F64, device=device)
    p = torch.softmax(logits, 0)
    q = torch.softmax((logits + params.draft_noise * noise) / params.draft_temperature, 0)
    return p, q


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p − q)); p itself when q ≥ p everywhere (no rejection can happen then).

    Example:
        >>> residual(torch.tensor([0.5, 0.5]), torch.tensor([0.8, 0.2]))
        tensor([0., 1.])
    """
    excess = (p - q).clamp(min=0)
    total = excess.sum()
    return excess / total if total > 0 else p


def total_variation(a: torch.Tensor, b: torch.Tensor) -> float:
    """½ Σ |a − b|."""
    return 0.5 * (a - b).abs().sum().item()


def expected_tokens(alpha: float, gamma: int) -> float:
    """Σ_{i=0}^{γ} α^i: the mean of the capped geometric count, Eq. 1 without its division."""
    return sum(alpha**i for i in range(gamma + 1))


def chi2_pvalue(counts: torch.Tensor, p: torch.Tensor) -> float:
    """scipy's chi-square goodness-of-fit p-value, rare cells pooled so each expects ≥ 5."""
    observed = counts.double().cpu()
    expected = p.cpu() * observed.sum()
    rare = expected < MIN_EXPECTED
    if rare.any():
        observed = torch.cat([observed[~rare], observed[rare].sum()[None]])
        expected = torch.cat([expected[~rare], expected[rare].sum()[None]])
    if observed.numel() < 2:
        return 1.0
    return float(chisquare(observed.numpy(), expected.numpy()).pvalue)


def speculate(
    p: torch.Tensor, q: torch.Tensor, gamma: int, passes: int, generator: torch.Generator
) -> dict[str, torch.Tensor]:
    """Run ``passes`` iterations of Algorithm 1 at once; return counts and accepted drafts."""
    vocab = p.numel()
    draft = torch.multinomial(q, passes * gamma, replacement=True, generator=generator)
    draft = draft.view(passes, gamma)
    coins = torch.rand(passes, gamma, generator=generator, dtype=F64, device=p.device)
    accepted = coins < p[draft] / q[draft]  # probability min(1, p/q)
    kept = accepted.long().cumprod(1).bool()  # a rejection drops the rest of the draft
    n = kept.sum(1)
    fix = torch.multinomial(residual(p, q), passes, replacement=True, generator=generator)
    bonus = torch.multinomial(p, passes, replacement=True, generator=generator)
    from_p = torch.multinomial(p, passes, replacement=True, generator=generator)
    kept_counts = torch.bincount(draft[kept], minlength=vocab)
    full = n == gamma
    return {
        "n": n,
        "counts": kept_counts + torch.bincount(torch.where(full, bonus, fix), minlength=vocab),
        "biased": kept_counts + torch.bincount(torch.where(full, bonus, from_p), minlength=vocab),
    }


def compute(params: SpeculativeSamplingParams, device: torch.device) -> Outcome:
    """Draw p and q, run the passes, and test what was emitted against p."""
    generator = seeded(device, params.seed)
    p, q = distributions(params, generator, device)
    gamma, c = params.gamma, params.cost_ratio
    overlap = torch.minimum(p, q)
    alpha = overlap.sum().item()
    run = speculate(p, q, gamma, params.passes, generator)
    n = run["n"]
    emitted = int(run["counts"].sum().item())
    checked = torch.clamp(n + 1, max=gamma).sum().item()
    tokens_per_pass = (n + 1).double().mean().item()
    formula = expected_tokens(alpha, gamma)
    floor = 0.5 * math.sqrt(2 / math.pi) * (p * (1 - p) / emitted).sqrt().sum().item()
    outputs = {
        "alpha": alpha,
        "tv_draft": total_variation(p, q),
        "acceptance_rate": n.sum().item() / checked,
        "tokens_per_pass": tokens_per_pass,
        "expected_tokens_per_pass": formula,
        "emitted_tokens": float(emitted),
        "tv_emitted": total_variation(run["counts"].double() / emitted, p),
        "tv_sampling_floor": floor,
        "chi2_pvalue": chi2_pvalue(run["counts"], p),
        "first_token_tv_exact": total_variation(overlap + (1 - alpha) * residual(p, q), p),
        "biased_tv_emitted": total_variation(run["biased"].double() / emitted, p),
        "biased_chi2_pvalue": chi2_pvalue(run["biased"], p),
        "biased_first_token_tv_exact": total_variation(overlap + (1 - alpha) * p, p),
        "walltime_speedup": formula / (gamma * c + 1),
        "measured_speedup": tokens_per_pass / (gamma * c + 1),
    }
    theory = {
        "tv_draft": 1 - alpha,
        "acceptance_rate": alpha,
        "tokens_per_pass": formula,
        "tv_emitted": floor,
        "first_token_tv_exact": 0.0,
        "measured_speedup": outputs["walltime_speedup"],
    }
    notes = [
        "Every position has the same p and q, so acceptances are i.i.d. and Eq. 1 is exact "
        "here; with a real model α varies from token to token.",
        "The biased variant shares the drafts, coins and bonus tokens; only a rejected token "
        "is replaced by a draw from p instead of norm(max(0, p − q)).",
        "The chi-square test pools tokens expected fewer than 5 times into one cell; under "
        "the exact rule its p-value is uniform, so p < 0.01 happens 1% of the time.",
        "CPU and CUDA generators draw different streams: a seed reproduces its numbers on "
        "the same kind of device.",
    ]
    return Outcome(
        outputs=outputs, theory=theory, series=charts(params, p, q, run, alpha), notes=notes
    )


def charts(
    params: SpeculativeSamplingParams,
    p: torch.Tensor,
    q: torch.Tensor,
    run: dict[str, torch.Tensor],
    alpha: float,
) -> list[Series]:
    """Token frequencies beside p and q; tokens per pass against the capped geometric law."""
    tokens = [float(x) for x in range(params.vocab)]
    emitted = run["counts"].sum().item()
    gamma = params.gamma
    counts = [float(k) for k in range(1, gamma + 2)]
    per_pass = torch.bincount(run["n"] + 1, minlength=gamma + 2)[1:].double() / run["n"].numel()
    law = [alpha ** (k - 1) * (1 - alpha) for k in range(1, gamma + 1)] + [alpha**gamma]
    gammas = list(range(1, 17))
    frequencies = (
        ("target p", p),
        ("draft q", q),
        ("emitted, residual resampling", run["counts"].double() / emitted),
        ("emitted, resampling from p", run["biased"].double() / emitted),
    )
    return [
        *(
            Series(
                name=name,
                kind="bar",
                x=tokens,
                y=values.tolist(),
                x_label="token",
                y_label="probability",
            )
            for name, values in frequencies
        ),
        Series(
            name="measured",
            kind="bar",
            x=counts,
            y=per_pass.tolist(),
            x_label="tokens emitted by one target pass",
            y_label="share of passes",
        ),
        Series(
            name="capped geometric (α)",
            kind="line",
            x=counts,
            y=law,
            x_label="tokens emitted by one target pass",
            y_label="share of passes",
        ),
        Series(
            name=f"Theorem 3.8 speedup, c = {params.cost_ratio:g}",
            kind="line",
            x=[float(g) for g in gammas],
            y=[expected_tokens(alpha, g) / (g * params.cost_ratio + 1) for g in gammas],
            x_label="draft length γ",
            y_label="expected walltime speedup",
        ),
    ]


SPECULATIVE_SAMPLING = Demo(spec=spec.SPECULATIVE_SAMPLING, compute=compute)

"""``pass_at_k``: the unbiased pass@k estimator against the naive plug-in ones.

Each problem i has a per-sample pass probability p_i, drawn from a Beta
distribution with mean ``pass_rate`` (problems differ in difficulty). Its
pass@k is 1 − (1 − p_i)^k. From n ≥ k samples with c correct, Chen et al. 2021
(§2.1) estimate it with 1 − C(n − c, k)/C(n, k), which is unbiased because it
is the chance that k samples drawn without replacement from the n all fail.
Plugging the empirical rate c/n into 1 − (1 − c/n)^k underestimates
(Appendix A), and so does plugging in the rate pooled over all problems.
"""

import math

import torch
from scipy.special import betaincinv  # type: ignore[import-untyped]

from app.demos.specs import evaluation_pass_at_k as spec
from app.demos.specs.evaluation_pass_at_k import PassAtKParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

K_CURVE = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def unbiased_pass_at_k(n: int, correct: torch.Tensor, k: int) -> torch.Tensor:
    """1 − C(n − c, k)/C(n, k) per problem, via log-gamma (1 where n − c < k).

    Example:
        >>> estimates = unbiased_pass_at_k(5, torch.tensor([0.0, 1.0, 4.0], dtype=torch.float64), 2)
        >>> [round(x, 12) for x in estimates.tolist()]
        [0.0, 0.4, 1.0]
    """
    failures = n - correct
    enough = failures >= k
    safe = torch.where(enough, failures, torch.full_like(failures, float(k)))
    log_ratio = (
        torch.lgamma(safe + 1)
        - torch.lgamma(safe - k + 1)
        - math.lgamma(n + 1)
        + math.lgamma(n - k + 1)
    )
    estimate = torch.where(enough, 1 - log_ratio.exp(), torch.ones_like(failures))
    return torch.where(correct > 0, estimate, torch.zeros_like(failures))  # exactly 0 at c = 0


def naive_pass_at_k(n: int, correct: torch.Tensor, k: int) -> torch.Tensor:
    """1 − (1 − c/n)^k per problem: the plug-in estimate Chen et al. warn against.

    Example:
        >>> round(naive_pass_at_k(5, torch.tensor([1.0], dtype=torch.float64), 2).item(), 12)
        0.36
    """
    return 1 - (1 - correct / n) ** k


def beta_pass_at_k(pass_rate: float, concentration: float, k: int) -> float:
    """E[1 − (1 − p)^k] for p ~ Beta(a, b): 1 − B(a, b + k)/B(a, b).

    Example:
        >>> round(beta_pass_at_k(0.5, 2.0, 1), 6)   # pass@1 is the mean pass rate
        0.5
    """
    a, b = pass_rate * concentration, (1 - pass_rate) * concentration
    log_fail = math.lgamma(b + k) + math.lgamma(a + b) - math.lgamma(b) - math.lgamma(a + b + k)
    return 1 - math.exp(log_fail)


def beta_naive_pass_at_k(pass_rate: float, concentration: float, n: int, k: int) -> float:
    """E[1 − (1 − c/n)^k] when c is beta-binomial: p ~ Beta(a, b), then c ~ Binomial(n, p).

    Example:
        >>> round(beta_naive_pass_at_k(0.01, 1e4, 200, 100), 2)   # true pass@100 is 0.63
        0.55
    """
    a, b = pass_rate * concentration, (1 - pass_rate) * concentration
    c = torch.arange(n + 1, dtype=torch.float64)
    log_pmf = (
        math.lgamma(n + 1)
        - torch.lgamma(c + 1)
        - torch.lgamma(n - c + 1)
        + torch.lgamma(c + a)
        + torch.lgamma(n - c + b)
        - math.lgamma(n + a + b)
        - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    )
    return (log_pmf.exp() * naive_pass_at_k(n, c, k)).sum().item()


def compute(params: PassAtKParams, device: torch.device) -> Outcome:
    """Draw per-problem pass rates and n pass/fail samples each; estimate pass@k three ways."""
    generator = seeded(device, params.seed)
    n, k = params.samples, params.k
    a = params.pass_rate * params.concentration
    b = (1 - params.pass_rate) * params.concentration
    # Beta(a, b) by inverting its CDF at uniform draws from the seeded torch generator
    # (torch's own Beta sampler takes no generator).
    uniform = torch.rand(params.problems, generator=generator, dtype=torch.float64, device=device)
    rates = torch.from_numpy(betaincinv(a, b, uniform.cpu().numpy())).to(device)
    passed = (
        torch.rand(params.problems, n, generator=generator, dtype=torch.float64, device=device)
        < rates[:, None]
    )
    correct = passed.sum(-1).double()

    true_per_problem = 1 - (1 - rates) ** k
    unbiased = unbiased_pass_at_k(n, correct, k)
    naive = naive_pass_at_k(n, correct, k)
    pooled_rate = correct.mean().item() / n
    first_k = passed[:, :k].any(-1).double()  # the "generate exactly k" estimate
    return Outcome(
        outputs={
            "unbiased": unbiased.mean().item(),
            "naive": naive.mean().item(),
            "naive_pooled": 1 - (1 - pooled_rate) ** k,
            "first_k": first_k.mean().item(),
            "true_pass_at_k": true_per_problem.mean().item(),
            "pass_at_1": pooled_rate,
            "naive_bias": (naive - true_per_problem).mean().item(),
            "unbiased_spread": unbiased.std().item() if params.problems > 1 else 0.0,
            "first_k_spread": first_k.std().item() if params.problems > 1 else 0.0,
        },
        theory={
            "unbiased": beta_pass_at_k(params.pass_rate, params.concentration, k),
            "true_pass_at_k": beta_pass_at_k(params.pass_rate, params.concentration, k),
            "pass_at_1": params.pass_rate,
            "first_k": beta_pass_at_k(params.pass_rate, params.concentration, k),
            "naive": beta_naive_pass_at_k(params.pass_rate, params.concentration, n, k),
            "naive_pooled": 1 - (1 - params.pass_rate) ** k,
        },
        series=_k_curves(n, correct, params),
        notes=[
            "true_pass_at_k averages 1 − (1 − p_i)^k over the problems drawn; theory is its "
            "expectation over the Beta distribution, 1 − B(a, b + k)/B(a, b). Theory for naive "
            "sums over the beta-binomial distribution of c; for naive_pooled it is "
            "1 − (1 − mean pass rate)^k, the limit of many problems.",
            "first_k scores each problem 1 if any of its first k samples passed: unbiased too, "
            "but noisier per problem (compare the spreads).",
        ],
    )


def _k_curves(n: int, correct: torch.Tensor, params: PassAtKParams) -> list[Series]:
    """Unbiased, naive and true pass@k against k, for every k in K_CURVE up to n."""
    ks = [k for k in K_CURVE if k <= n]
    curves = {
        "unbiased 1 − C(n−c,k)/C(n,k)": [
            unbiased_pass_at_k(n, correct, k).mean().item() for k in ks
        ],
        "naive 1 − (1 − c/n)^k": [naive_pass_at_k(n, correct, k).mean().item() for k in ks],
        "expected (Beta)": [beta_pass_at_k(params.pass_rate, params.concentration, k) for k in ks],
    }
    return [
        Series(
            name=name,
            kind="line",
            x=[float(k) for k in ks],
            y=values,
            x_label="k",
            y_label="pass@k",
        )
        for name, values in curves.items()
    ]


# --- the demo -----------------------------------------------------------------------------------

PASS_AT_K = Demo(spec=spec.PASS_AT_K, compute=compute)

"""speculative_sampling against exact enumeration of one pass and goodness-of-fit tests.

References: Leviathan et al. 2023 (arXiv:2211.17192): Algorithm 1 and §2.3 (accept x
with probability min(1, p(x)/q(x)), resample from norm(max(0, p − q))), Definition 3.1
and Eq. 1 (E[tokens per pass] = (1 − α^(γ+1))/(1 − α)), Theorem 3.5 (α = Σ min(p, q)),
Lemma 3.3 (α = 1 − TV), Theorem 3.8 (walltime speedup ÷ (γc + 1)), Appendix A.1 (the
output is distributed as p). p and q are rebuilt here from the seed with ``math.exp``, and
one pass is enumerated draft by draft in plain Python.
"""

import math
from itertools import product

import pytest
import torch
from fastapi.testclient import TestClient
from scipy.stats import kstest  # type: ignore[import-untyped]

from tests.worker.conftest import RunDemo


def softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    weights = [math.exp(z - top) for z in logits]
    return [w / sum(weights) for w in weights]


def target_and_draft(
    seed: int, vocab: int, scale: float = 1.5, noise: float = 0.7, temperature: float = 1.0
) -> tuple[list[float], list[float]]:
    """p and q from the same draws as the demo (logits, then noise), softmax by hand."""
    generator = torch.Generator().manual_seed(seed)
    logits = (scale * torch.randn(vocab, generator=generator, dtype=torch.float64)).tolist()
    z = torch.randn(vocab, generator=generator, dtype=torch.float64).tolist()
    p = softmax(logits)
    q = softmax([(a + noise * b) / temperature for a, b in zip(logits, z, strict=True)])
    return p, q


def enumerate_pass(
    p: list[float], q: list[float], gamma: int, resample_from_p: bool = False
) -> tuple[float, list[float], list[float]]:
    """One pass, every draft sequence of length γ enumerated.

    Returns the expected tokens per pass, the expected count of each token per pass,
    and the exact distribution of the pass's first emitted token.
    """
    vocab = range(len(p))
    keep = [min(1.0, p[x] / q[x]) for x in vocab]
    excess = [max(0.0, p[x] - q[x]) for x in vocab]
    fix = [e / sum(excess) for e in excess] if sum(excess) > 0 else p
    if resample_from_p:
        fix = p
    tokens, counts, first = 0.0, [0.0] * len(p), [0.0] * len(p)
    for drafts in product(vocab, repeat=gamma):
        reach = math.prod(q[x] for x in drafts)  # chance the draft proposes this sequence
        for i, x in enumerate(drafts):
            accept = reach * keep[x]
            reject = reach - accept
            # Rejected at position i: i accepted tokens, then one from the residual.
            tokens += reject * (i + 1)
            for y in vocab:
                counts[y] += reject * fix[y]
                if i == 0:
                    first[y] += reject * fix[y]
            counts[x] += accept
            if i == 0:
                first[x] += accept
            reach = accept
        tokens += reach * (gamma + 1)  # all γ accepted: plus a bonus token from p
        for y in vocab:
            counts[y] += reach * p[y]
    return tokens, counts, first


def tv(a: list[float], b: list[float]) -> float:
    return 0.5 * sum(abs(x - y) for x, y in zip(a, b, strict=True))


# --- exact quantities -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vocab", "noise", "temperature", "gamma"),
    [(4, 0.7, 1.0, 3), (3, 2.0, 1.0, 4), (5, 0.3, 2.5, 2), (2, 1.0, 0.5, 5)],
)
def test_alpha_and_the_first_token_match_an_enumeration(
    run: RunDemo, vocab: int, noise: float, temperature: float, gamma: int
) -> None:
    params = {"vocab": vocab, "draft_noise": noise, "draft_temperature": temperature}
    out = run("speculative_sampling", **params, gamma=gamma, passes=10, seed=7).outputs
    p, q = target_and_draft(7, vocab, noise=noise, temperature=temperature)
    alpha = sum(min(a, b) for a, b in zip(p, q, strict=True))
    assert out["alpha"] == pytest.approx(alpha, abs=1e-12)
    assert out["tv_draft"] == pytest.approx(tv(p, q), abs=1e-12)
    assert out["tv_draft"] == pytest.approx(1 - alpha, abs=1e-12)  # Lemma 3.3
    tokens, counts, first = enumerate_pass(p, q, gamma)
    # Appendix A.1: the first emitted token is min(p, q) + (1 − α)·residual = p.
    assert first == pytest.approx(p, abs=1e-12)
    assert out["first_token_tv_exact"] == pytest.approx(0, abs=1e-12)
    # Every later token too: the expected count of each token per pass is p × E[tokens].
    assert counts == pytest.approx([tokens * x for x in p], abs=1e-12)
    # Eq. 1, closed form, against the enumerated mean and the demo's.
    closed = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    assert tokens == pytest.approx(closed, rel=1e-12)
    assert out["expected_tokens_per_pass"] == pytest.approx(closed, rel=1e-12)
    # Resampling from p: the first token is min(p, q) + (1 − α)·p, not p.
    _, _, biased = enumerate_pass(p, q, gamma, resample_from_p=True)
    assert out["biased_first_token_tv_exact"] == pytest.approx(tv(biased, p), abs=1e-12)
    assert out["biased_first_token_tv_exact"] > 0.01


@pytest.mark.parametrize(("gamma", "c"), [(1, 0.0), (4, 0.05), (7, 0.02), (16, 1.0)])
def test_walltime_speedup_is_theorem_3_8(run: RunDemo, gamma: int, c: float) -> None:
    out = run("speculative_sampling", gamma=gamma, cost_ratio=c, passes=10).outputs
    alpha = out["alpha"]
    expected = (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))
    assert out["walltime_speedup"] == pytest.approx(expected, rel=1e-12)
    assert out["measured_speedup"] == pytest.approx(out["tokens_per_pass"] / (gamma * c + 1))


def test_identical_draft_accepts_everything(run: RunDemo) -> None:
    out = run("speculative_sampling", draft_noise=0.0, gamma=6, passes=1000).outputs
    assert out["alpha"] == pytest.approx(1, abs=1e-12)
    assert out["acceptance_rate"] == 1
    assert out["tokens_per_pass"] == 7 == out["expected_tokens_per_pass"]
    assert out["emitted_tokens"] == 7000


def test_a_temperature_mismatch_lowers_alpha(run: RunDemo) -> None:
    alphas = [
        run("speculative_sampling", draft_noise=0.0, draft_temperature=t, passes=10).outputs[
            "alpha"
        ]
        for t in (1.0, 1.5, 3.0, 10.0)
    ]
    assert alphas[0] == pytest.approx(1, abs=1e-12)
    assert alphas == sorted(alphas, reverse=True) and alphas[-1] < 0.9


# --- measured quantities --------------------------------------------------------------------


@pytest.mark.parametrize(("noise", "gamma"), [(0.7, 4), (2.0, 2), (0.2, 10)])
def test_acceptance_and_tokens_per_pass_match_eq_1(run: RunDemo, noise: float, gamma: int) -> None:
    passes = 50_000
    out = run("speculative_sampling", draft_noise=noise, gamma=gamma, passes=passes).outputs
    alpha = out["alpha"]
    # The count per pass is capped geometric: P(k) = α^(k−1)(1 − α) for k ≤ γ, α^γ for γ + 1.
    pmf = {k: alpha ** (k - 1) * (1 - alpha) for k in range(1, gamma + 1)} | {
        gamma + 1: alpha**gamma
    }
    mean = sum(k * w for k, w in pmf.items())
    sd = math.sqrt(sum((k - mean) ** 2 * w for k, w in pmf.items()))
    # 4 standard errors: a 6e-5 two-sided false-alarm rate per check.
    assert abs(out["tokens_per_pass"] - mean) < 4 * sd / math.sqrt(passes)
    # Drafts checked per pass (up to the first rejection): Σ_{i<γ} α^i; each is a coin of α.
    checked = passes * sum(alpha**i for i in range(gamma))
    se = math.sqrt(alpha * (1 - alpha) / checked)
    assert abs(out["acceptance_rate"] - alpha) < 4 * se


def test_emitted_tokens_pass_a_chi_square_test_and_the_biased_ones_fail(run: RunDemo) -> None:
    # Seed 0, the defaults: 200,000 passes, about 738,000 tokens. Under the exact rule the
    # p-value is uniform, so asserting p > 0.001 is a 0.1% false alarm for a fresh seed
    # (seed 0 gave 0.77). The biased variant's exact TV is 0.05: its p-value underflows.
    out = run("speculative_sampling").outputs
    assert out["chi2_pvalue"] > 0.001
    assert out["tv_emitted"] < 2 * out["tv_sampling_floor"]
    assert out["tv_draft"] > 100 * out["tv_emitted"]
    assert out["biased_chi2_pvalue"] < 1e-12
    assert out["biased_tv_emitted"] > 20 * out["tv_sampling_floor"]


@pytest.mark.parametrize(("noise", "gamma"), [(0.7, 4), (1.5, 2)])
def test_biased_frequencies_match_their_enumerated_law(
    run: RunDemo, noise: float, gamma: int
) -> None:
    out = run("speculative_sampling", vocab=4, draft_noise=noise, gamma=gamma, seed=3).outputs
    p, q = target_and_draft(3, 4, noise=noise)
    tokens, counts, _ = enumerate_pass(p, q, gamma, resample_from_p=True)
    law = [c / tokens for c in counts]
    assert tv(law, p) > 0.01
    # The stream's frequencies converge to E[count]/E[tokens]; 5 × the floor is far outside
    # their noise (a TV of that many standard deviations).
    assert abs(out["biased_tv_emitted"] - tv(law, p)) < 5 * out["tv_sampling_floor"]


def test_chi_square_p_values_are_uniform_over_seeds(run: RunDemo) -> None:
    # 60 seeds of 5,000 passes: under the exact rule the p-values are uniform. The KS test
    # has a 0.1% false-alarm rate at this threshold, and P(4 or more of 60 below 0.01) is
    # 0.3%. The biased variant is rejected on every seed.
    results = [run("speculative_sampling", vocab=6, passes=5000, seed=s).outputs for s in range(60)]
    pvalues = [r["chi2_pvalue"] for r in results]
    assert kstest(pvalues, "uniform").pvalue > 0.001
    assert sum(v < 0.01 for v in pvalues) <= 3
    assert sum(r["biased_chi2_pvalue"] < 0.01 for r in results) >= 55


def test_same_seed_same_numbers(run: RunDemo) -> None:
    params = {"vocab": 16, "gamma": 3, "passes": 2000, "seed": 4}
    assert run("speculative_sampling", **params).outputs == (
        run("speculative_sampling", **params).outputs
    )


# --- bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        ({"gamma": 16, "passes": 65_537}, "passes", "lower passes to 65,536"),
        ({"gamma": 0}, "gamma", "between"),
        ({"gamma": 17}, "gamma", "between"),
        ({"vocab": 1}, "vocab", "between"),
        ({"vocab": 257}, "vocab", "between"),
        ({"gamma": 1, "passes": 262_145}, "passes", "between"),
        ({"draft_temperature": 0}, "draft_temperature", "between"),
        ({"cost_ratio": -0.1}, "cost_ratio", "between"),
    ],
)
def test_bad_parameters_are_422(
    client: TestClient, body: dict[str, object], param: str, says: str
) -> None:
    response = client.post("/demos/speculative_sampling", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert [problem["param"] for problem in detail] == [param]
    assert says in detail[0]["message"]

"""sampled_softmax: the losses against a plain-Python loop, the fits against SciPy, the limits.

The reference loss builds each positive's softmax the way TensorFlow's
``sampled_softmax_loss`` describes it: the positive's logit and the K sampled
logits, log Q subtracted from each when corrected, a sampled copy of the positive
dropped when accidental hits are removed. The fits are checked against
``scipy.optimize.minimize`` of that reference on the same negatives, and against
the large-K closed form: without correction the optimum is log p − log Q.
"""

import math
from typing import Any

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.optimize import minimize

from app.worker.demos import get_demo
from app.worker.demos.systems_sampled_softmax import (
    catalogue,
    draw_negatives,
    full_softmax_loss,
    hit_counts,
    sampled_softmax_loss,
)
from app.worker.device import seeded
from tests.worker.conftest import RunDemo

Vector = np.ndarray[Any, np.dtype[np.float64]]

# --- the reference ------------------------------------------------------------------------------


def sampled_loss_by_hand(
    logits: list[float],
    p: list[float],
    negative_sets: list[list[int]],
    log_q: list[float] | None,
    remove_accidental_hits: bool,
) -> float:
    """Mean over the sets of Σ_y p_y · (−log softmax of the positive among [y] + negatives)."""
    shift = log_q if log_q is not None else [0.0] * len(logits)
    u = [s - c for s, c in zip(logits, shift, strict=True)]
    total = 0.0
    for negatives in negative_sets:
        for y, weight in enumerate(p):
            row = [u[y]] + [u[k] for k in negatives if not (remove_accidental_hits and k == y)]
            top = max(row)
            total += weight * (-(u[y] - top) + math.log(sum(math.exp(v - top) for v in row)))
    return total / len(negative_sets)


def zipf_log_q(items: int, exponent: float) -> Vector:
    weights = np.arange(1, items + 1, dtype=np.float64) ** -exponent
    return np.log(weights / weights.sum())


def demo_inputs(
    cpu: torch.device, **params: Any
) -> tuple[Vector, Vector, Vector, list[list[int]], Any]:
    """log Q, z, log p and the negative sets, drawn as the demo draws them."""
    validated = get_demo("sampled_softmax").validate(params)
    generator = seeded(cpu, validated.seed)
    data = catalogue(validated, generator, cpu)
    drawn = draw_negatives(data.log_q.exp(), validated.negatives, generator)
    return (
        data.log_q.numpy(),
        data.taste.numpy(),
        data.log_p.numpy(),
        drawn.tolist(),
        validated,
    )


# --- the losses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("corrected", [False, True])
@pytest.mark.parametrize("remove_accidental_hits", [False, True])
def test_sampled_loss_matches_a_loop_over_positives(
    corrected: bool, remove_accidental_hits: bool
) -> None:
    rng = np.random.default_rng(3)
    items = 7
    logits = rng.normal(size=items) * 2
    p = rng.dirichlet(np.ones(items))
    log_q = zipf_log_q(items, 1.2)
    # Repeats and hits on purpose: item 0 twice, and a set of one item only.
    sets = [[0, 0, 3, 5], [1, 2, 2, 6], [4, 4, 4, 4]]
    expected = sampled_loss_by_hand(
        logits.tolist(),
        p.tolist(),
        sets,
        log_q.tolist() if corrected else None,
        remove_accidental_hits,
    )
    negatives = torch.tensor(sets)
    ours = sampled_softmax_loss(
        torch.tensor(logits),
        torch.tensor(p),
        negatives,
        log_q=torch.tensor(log_q) if corrected else None,
        hits=hit_counts(negatives, items) if remove_accidental_hits else None,
    )
    assert ours.item() == pytest.approx(expected, abs=1e-12)


def test_a_positive_whose_every_negative_is_a_hit_costs_nothing() -> None:
    # Set [4, 4, 4, 4] with hits removed leaves item 4 alone in its softmax: loss 0.
    p = torch.zeros(5, dtype=torch.float64)
    p[4] = 1.0
    negatives = torch.tensor([[4, 4, 4, 4]])
    logits = torch.zeros(5, dtype=torch.float64)
    loss = sampled_softmax_loss(logits, p, negatives, log_q=None, hits=hit_counts(negatives, 5))
    assert loss.item() == pytest.approx(0.0, abs=1e-300)  # softplus of log(tiny)
    kept = sampled_softmax_loss(logits, p, negatives, log_q=None, hits=None)
    assert kept.item() == pytest.approx(math.log(5))


def test_full_loss_is_the_cross_entropy_against_p() -> None:
    rng = np.random.default_rng(0)
    logits, p = rng.normal(size=9), rng.dirichlet(np.ones(9))
    log_softmax = logits - np.log(np.exp(logits).sum())
    ours = full_softmax_loss(torch.tensor(logits), torch.tensor(p)).item()
    assert ours == pytest.approx(-(p * log_softmax).sum(), abs=1e-12)


def test_catalogue_is_zipf_popularity_tilted_by_taste(cpu: torch.device) -> None:
    log_q, taste, log_p, _, _ = demo_inputs(cpu, items=300, zipf_exponent=1.3, taste_std=0.7)
    assert log_q == pytest.approx(zipf_log_q(300, 1.3), abs=1e-12)
    tilted = np.exp(log_q) * np.exp(0.7 * taste)
    assert np.exp(log_p) == pytest.approx(tilted / tilted.sum(), rel=1e-10)


# --- the fits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"items": 12, "negatives": 3, "zipf_exponent": 1.0, "seed": 1},
        {"items": 20, "negatives": 5, "zipf_exponent": 1.7, "remove_accidental_hits": False},
    ],
)
def test_fits_match_scipy_on_the_same_negatives(
    run: RunDemo, cpu: torch.device, params: dict[str, Any]
) -> None:
    log_q, taste, log_p, sets, validated = demo_inputs(cpu, **params)
    p = np.exp(log_p)

    def reference(weights: Vector, corrected: bool) -> float:
        logits = (weights[0] * log_q + weights[1] * taste).tolist()
        return sampled_loss_by_hand(
            logits,
            p.tolist(),
            sets,
            log_q.tolist() if corrected else None,
            validated.remove_accidental_hits,
        )

    result = run("sampled_softmax", **params)
    for method, corrected in (("uncorrected", False), ("corrected", True)):
        best = minimize(
            reference,
            np.zeros(2),
            args=(corrected,),
            method="Nelder-Mead",
            options={"xatol": 1e-9, "fatol": 1e-13, "maxiter": 4000},
        ).x
        assert result.outputs[f"popularity_weight_{method}"] == pytest.approx(best[0], abs=1e-4)
        assert result.outputs[f"taste_weight_{method}"] == pytest.approx(best[1], abs=1e-4)


def test_full_softmax_recovers_p(run: RunDemo) -> None:
    for taste_std in (0.0, 1.0, 2.5):
        result = run("sampled_softmax", items=400, taste_std=taste_std)
        assert result.outputs["popularity_weight_full"] == pytest.approx(1.0, abs=1e-5)
        assert result.outputs["taste_weight_full"] == pytest.approx(taste_std, abs=1e-5)
        assert result.outputs["kl_full"] == pytest.approx(0.0, abs=1e-9)


def test_correction_is_a_shift_by_log_q(run: RunDemo) -> None:
    # The model holds log Q as a feature: on the same negatives the corrected loss at (β, γ)
    # equals the uncorrected loss at (β − 1, γ), so the two minima differ by exactly 1 in β.
    for params in ({}, {"negatives": 4, "zipf_exponent": 0.5}, {"remove_accidental_hits": False}):
        out = run("sampled_softmax", items=300, **params).outputs
        shift = out["popularity_weight_corrected"] - out["popularity_weight_uncorrected"]
        assert shift == pytest.approx(1.0, abs=1e-6)
        assert out["taste_weight_corrected"] == pytest.approx(
            out["taste_weight_uncorrected"], abs=1e-6
        )


def test_large_k_limit_is_log_p_minus_log_q(run: RunDemo, cpu: torch.device) -> None:
    # With K = 1024 negatives from Q, Σ_k e^{s_k} ≈ K·Σ_i Q(i)e^{s_i}: the uncorrected optimum is
    # log p − log Q + const (β = 0, γ = σ). The KL of that limit, in numpy:
    log_q, _, log_p, _, _ = demo_inputs(cpu, items=500, negatives=1024)
    limit = log_p - log_q
    limit -= np.log(np.exp(limit).sum())
    limit_kl = float((np.exp(log_p) * (log_p - limit)).sum())
    out = run("sampled_softmax", items=500, negatives=1024).outputs
    assert out["kl_uncorrected_limit"] == pytest.approx(limit_kl, rel=1e-10)
    assert out["popularity_weight_uncorrected"] == pytest.approx(0.0, abs=0.05)
    assert out["taste_weight_uncorrected"] == pytest.approx(1.0, abs=0.05)
    assert out["kl_uncorrected"] == pytest.approx(limit_kl, rel=0.1)
    assert out["bias_slope_uncorrected"] == pytest.approx(-1.0, abs=0.05)
    assert out["popularity_weight_corrected"] == pytest.approx(1.0, abs=0.05)
    assert out["kl_corrected"] < 0.01


@pytest.mark.parametrize(
    "params",
    [{}, {"zipf_exponent": 0.5}, {"zipf_exponent": 1.5, "negatives": 16}, {"taste_std": 2.0}],
)
def test_corrected_bias_is_much_smaller(run: RunDemo, params: dict[str, Any]) -> None:
    out = run("sampled_softmax", **params).outputs
    assert out["bias_slope_uncorrected"] < -0.8
    assert abs(out["bias_slope_corrected"]) < 0.15 * abs(out["bias_slope_uncorrected"])
    assert out["kl_corrected"] < 0.1 * out["kl_uncorrected"]
    assert out["head_share_uncorrected"] < out["head_share_corrected"]
    assert out["recall_at_k_corrected"] >= out["recall_at_k_uncorrected"]


def test_measurements_by_hand(run: RunDemo, cpu: torch.device) -> None:
    params = {"items": 200, "negatives": 32, "top_k": 7, "seed": 4}
    log_q, taste, log_p, _, _ = demo_inputs(cpu, **params)
    result = run("sampled_softmax", **params)
    out, p = result.outputs, np.exp(log_p)

    def log_model(method: str) -> Vector:
        s = out[f"popularity_weight_{method}"] * log_q + out[f"taste_weight_{method}"] * taste
        return s - np.log(np.exp(s).sum())

    full = log_model("full")
    for method in ("uncorrected", "corrected"):
        model = log_model(method)
        assert out[f"kl_{method}"] == pytest.approx((p * (log_p - model)).sum(), abs=1e-9)
        error = model - log_p
        slope, _ = np.polyfit(log_q, error, 1, w=np.sqrt(p))  # weighted least squares
        assert out[f"bias_slope_{method}"] == pytest.approx(slope, abs=1e-8)
        top = set(np.argsort(-full)[:7]) & set(np.argsort(-model)[:7])
        assert out[f"recall_at_k_{method}"] == len(top) / 7
        share = np.exp(model[:7]).sum() / p[:7].sum()
        assert out[f"head_share_{method}"] == pytest.approx(share, rel=1e-9)
    error = log_model("uncorrected") - log_p
    covariance = np.cov(error, log_q, aweights=p)
    correlation = covariance[0, 1] / math.sqrt(covariance[0, 0] * covariance[1, 1])
    assert out["bias_correlation_uncorrected"] == pytest.approx(correlation, abs=1e-9)


def test_same_seed_same_numbers(run: RunDemo) -> None:
    first = run("sampled_softmax", items=100, seed=7)
    assert run("sampled_softmax", items=100, seed=7).outputs == first.outputs
    assert run("sampled_softmax", items=100, seed=8).outputs != first.outputs


def test_series(run: RunDemo) -> None:
    result = run("sampled_softmax")
    series = {s.name: s for s in result.series}
    assert set(series) == {"full", "uncorrected", "corrected"}
    assert series["full"].y == pytest.approx([0.0] * len(series["full"].y), abs=1e-6)
    uncorrected = series["uncorrected"]
    assert uncorrected.x == sorted(uncorrected.x, reverse=True)  # most popular group first
    assert uncorrected.y[0] < uncorrected.y[-1]  # popular items under-scored


# Card claims (content/systems/sampled-softmax-logq.md). At the defaults (V 2,000, a 1, σ 1, K 64)
# over 30 seeds: popularity_weight_uncorrected −0.026 to 0.086, _corrected 0.974 to 1.086;
# bias_slope_uncorrected −1.026 to −0.908, _corrected −0.026 to 0.092; head_share_uncorrected
# 0.010 to 0.028, _corrected 0.92 to 1.20; kl_corrected 0.0002 to 0.029; recall_at_k_uncorrected
# 0 to 0.2, _corrected 0.9 to 1. At a 0.5 over 15 seeds head_share_uncorrected 0.063 to 0.127.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "popularity_weight_uncorrected", 0.02, 0.1),
        ({}, "bias_slope_uncorrected", -0.98, 0.1),
        ({}, "head_share_uncorrected", 0.018, 0.012),
        ({}, "recall_at_k_uncorrected", 0.2, 0.2),
        ({}, "popularity_weight_corrected", 1.02, 0.1),
        ({}, "bias_slope_corrected", 0.02, 0.1),
        ({}, "recall_at_k_corrected", 1.0, 0.1),
        ({"negatives": 1024}, "popularity_weight_uncorrected", 0.01, 0.1),
        ({"zipf_exponent": 0.5}, "head_share_uncorrected", 0.1, 0.05),
    ],
)
def test_card_claims(
    run: RunDemo, params: dict[str, Any], output: str, expected: float, tolerance: float
) -> None:
    outputs = run("sampled_softmax", **params).outputs
    assert outputs[output] == pytest.approx(expected, abs=tolerance)


@pytest.mark.parametrize(
    "body",
    [
        {"items": 5},
        {"items": 5001},
        {"negatives": 0},
        {"negatives": 2048},
        {"zipf_exponent": 3.0},
        {"taste_std": -1.0},
        {"top_k": 0},
        {"remove_accidental_hits": 1},
    ],
)
def test_bad_parameters_are_refused(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/demos/sampled_softmax", json=body)
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == next(iter(body))


def test_top_k_above_the_items_is_refused_with_a_fix(client: TestClient) -> None:
    response = client.post("/demos/sampled_softmax", json={"items": 20, "top_k": 30})
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["param"] == "top_k"
    assert "top_k must be at most items, got top_k 30 for 20 items" in detail["message"]

"""position_bias: IPW and naive CTR against exact expectations, NumPy simulations and loops.

The references are independent of the demo's code: expectations are worked out
cell by cell in plain Python from the position-based model, a fresh NumPy
simulation checks the demo's estimators statistically, and Kendall's τ, nDCG
and the effective sample size are recounted by hand. Tolerances of the card's
claims come from 100 seeds at each setting (docs/demos.md).
"""

import math
from itertools import combinations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.systems_position_bias import (
    effective_sample_fraction,
    estimated_propensities,
    expected_moments,
    propensities,
    simulate,
    weighted_estimate,
)
from tests.worker.conftest import RunDemo


def logs_of(cpu: torch.device, **params: object):  # type: ignore[no-untyped-def]
    """The demo's simulated log for these parameters."""
    return simulate(get_demo("position_bias").validate(params), cpu)


def test_propensities_are_a_power_of_the_reciprocal_rank() -> None:
    for eta in (0.0, 0.5, 1.0, 2.0):
        assert propensities(7, eta).tolist() == pytest.approx(
            [(1 / k) ** eta for k in range(1, 8)], rel=1e-15
        )


@pytest.mark.parametrize(("items", "share"), [(5, 0.05), (12, 0.2), (30, 0.5)])
def test_every_session_shows_every_item_once(cpu: torch.device, items: int, share: float) -> None:
    logs = logs_of(cpu, items=items, sessions=4000, randomized_share=share, seed=2)
    shown = logs.shown.numpy()
    assert (shown.sum(axis=0) == 4000).all()  # each position filled once per session
    assert (shown.sum(axis=1) == 4000).all()  # each item shown once per session
    assert logs.shown_randomized.sum().item() == round(share * 4000) * items
    # The logged sessions put each item at the rank of its production score, every time.
    ranks = np.argsort(np.argsort(-logs.production_scores.numpy()))
    logged = logs.shown_logged.numpy()
    for item in range(items):
        assert logged[item, ranks[item]] == 4000 - round(share * 4000)
    assert (logs.clicks.numpy() <= shown).all()


def test_ipw_expectation_is_the_relevance_exactly(cpu: torch.device) -> None:
    # IPW is linear in the clicks: fed each cell's expected clicks n·θ_k·r_i, worked out
    # here in plain Python, it must return r_i for every item whatever the positions.
    logs = logs_of(cpu, items=8, sessions=5000, eta=1.5, randomized_share=0.3, seed=4)
    shown, theta, r = logs.shown.tolist(), logs.propensities.tolist(), logs.relevance.tolist()
    expected_clicks = torch.tensor(
        [[shown[i][k] * theta[k] * r[i] for k in range(8)] for i in range(8)], dtype=torch.float64
    )
    ipw = weighted_estimate(
        expected_clicks, torch.tensor([1 / t for t in theta], dtype=torch.float64), 5000
    )
    assert ipw.tolist() == pytest.approx(r, abs=1e-12)
    # The naive CTR's expectation is r_i times the θ averaged over where the item was shown.
    naive = weighted_estimate(expected_clicks, torch.ones(8, dtype=torch.float64), 5000)
    averaged = [r[i] * sum(shown[i][k] * theta[k] for k in range(8)) / 5000 for i in range(8)]
    assert naive.tolist() == pytest.approx(averaged, abs=1e-12)
    # With a deterministic order (no shuffled share to speak of) that is θ_k(i) · r_i.
    moments = expected_moments(logs, torch.ones(8, dtype=torch.float64), 5000)
    assert moments.mean.tolist() == pytest.approx(averaged, abs=1e-12)


def test_ipw_and_naive_against_a_fresh_numpy_simulation(run: RunDemo, cpu: torch.device) -> None:
    # A separate NumPy simulation, session by session, of the same model on the demo's
    # relevances and production order: IPW's mean over 2,000 sessions × 40 repeats sits on r_i
    # (each item's z-score within 4.5: a false alarm below 1e-4 for 10 items), the CTR on
    # r_i·θ_k(i).
    logs = logs_of(cpu, items=10, sessions=2000, eta=1.0, ranker_noise=0.3, seed=6)
    r = logs.relevance.numpy()
    position = np.argsort(np.argsort(-logs.production_scores.numpy()))
    theta = 1.0 / (position + 1)
    rng = np.random.default_rng(0)
    clicks = rng.random((40 * 2000, 10)) < theta * r  # production order only
    ipw = (clicks / theta).mean(axis=0)
    naive = clicks.mean(axis=0)
    standard_error = np.sqrt(r * (1 / theta - r) / len(clicks))
    assert np.abs((ipw - r) / standard_error).max() < 4.5
    assert (
        np.abs((naive - theta * r) / np.sqrt(theta * r * (1 - theta * r) / len(clicks))).max() < 4.5
    )
    # The demo's own IPW over 60 seeds averages to the relevances too (mean bias near 0).
    biases = [
        run("position_bias", sessions=2000, seed=s).outputs["ipw_mean_bias"] for s in range(60)
    ]
    assert abs(np.mean(biases)) < 4.5 * np.std(biases) / math.sqrt(60)


def test_expected_moments_match_a_numpy_monte_carlo(cpu: torch.device) -> None:
    # Closed-form mean and variance of a weighted estimator against 20,000 NumPy binomial
    # redraws of every cell on the same log; the sample variance's relative error is about
    # √(2/20,000) = 1%, so 6% is over 5 standard errors.
    logs = logs_of(cpu, items=6, sessions=3000, eta=1.2, randomized_share=0.2, seed=8)
    shown, r, theta = logs.shown.numpy(), logs.relevance.numpy(), logs.propensities.numpy()
    rng = np.random.default_rng(1)
    draws = rng.binomial(shown.astype(np.int64), r[:, None] * theta[None, :], size=(20_000, 6, 6))
    for floor in (0.01, 0.3, 1.0):
        weights = 1 / np.maximum(theta, floor)
        estimates = (draws * weights).sum(axis=2) / 3000
        moments = expected_moments(logs, torch.from_numpy(weights), 3000)
        assert moments.mean.numpy() == pytest.approx(estimates.mean(axis=0), rel=0.01)
        assert moments.variance.numpy() == pytest.approx(estimates.var(axis=0), rel=0.06)


def test_clipping_at_one_is_the_naive_ctr(run: RunDemo) -> None:
    for seed in range(3):
        result = run("position_bias", clip=1.0, seed=seed).outputs
        assert result["clipped_mae"] == result["naive_mae"]
        assert result["clipped_mean_bias"] == result["naive_mean_bias"]
        assert result["clipped_kendall_tau"] == result["naive_kendall_tau"]
        assert result["clipped_ess_fraction"] == 1.0
        assert result["clipped_rmse_expected"] == result["naive_rmse_expected"]
    # A floor at or below the smallest θ_k changes nothing: plain IPW.
    plain = run("position_bias", items=10, clip=0.1).outputs  # θ_10 = 0.1
    assert plain["clipped_mae"] == plain["ipw_mae"]
    assert plain["clipped_ess_fraction"] == plain["ess_fraction"]


def test_no_position_bias_makes_every_estimator_the_ctr(run: RunDemo) -> None:
    result = run("position_bias", eta=0.0).outputs
    assert result["ipw_mae"] == pytest.approx(result["naive_mae"], abs=1e-15)
    assert result["ess_fraction"] == pytest.approx(1.0, abs=1e-12)


def test_estimated_propensities_from_shuffled_clicks(cpu: torch.device) -> None:
    by_hand = torch.tensor(
        [[40.0, 10.0, 0.0], [60.0, 40.0, 0.0]], dtype=torch.float64
    )  # 100, 50, 0 clicks by position
    assert estimated_propensities(by_hand, 200).tolist() == [1.0, 0.5, 1 / 200]
    # With half of 200,000 sessions shuffled, θ̂_k is within 0.01 of θ_k at every position.
    logs = logs_of(cpu, items=10, sessions=200_000, randomized_share=0.5, seed=3)
    estimate = estimated_propensities(logs.clicks_randomized, 100_000)
    assert estimate.numpy() == pytest.approx(logs.propensities.numpy(), abs=0.01)


def kendall_by_hand(a: list[float], b: list[float]) -> float:
    """τ-b: (concordant − discordant) / √((pairs − ties in a)(pairs − ties in b))."""
    concordant = discordant = ties_a = ties_b = 0
    for i, j in combinations(range(len(a)), 2):
        da, db = a[i] - a[j], b[i] - b[j]
        ties_a += da == 0
        ties_b += db == 0
        if da * db > 0:
            concordant += 1
        elif da * db < 0:
            discordant += 1
    pairs = len(a) * (len(a) - 1) // 2
    return (concordant - discordant) / math.sqrt((pairs - ties_a) * (pairs - ties_b))


def ndcg_by_hand(score: list[float], gain: list[float], k: int) -> float:
    """Σ gain / log2(rank + 1) over the top k by score, over the same for the ideal order."""

    def dcg(order: list[int]) -> float:
        return sum(gain[i] / math.log2(rank + 2) for rank, i in enumerate(order[:k]))

    by_score = sorted(range(len(score)), key=lambda i: -score[i])
    return dcg(by_score) / dcg(sorted(range(len(gain)), key=lambda i: -gain[i]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranking_metrics_against_loops(run: RunDemo, cpu: torch.device, seed: int) -> None:
    params = {"items": 12, "sessions": 3000, "cutoff": 5, "clip": 0.3, "seed": seed}
    logs = logs_of(cpu, **params)
    result = run("position_bias", **params).outputs
    r = logs.relevance.tolist()
    clicks, theta = logs.clicks.numpy(), logs.propensities.numpy()
    naive = (clicks.sum(axis=1) / 3000).tolist()
    ipw = ((clicks / theta).sum(axis=1) / 3000).tolist()
    clipped = ((clicks / np.maximum(theta, 0.3)).sum(axis=1) / 3000).tolist()
    assert result["naive_kendall_tau"] == pytest.approx(kendall_by_hand(naive, r), abs=1e-12)
    assert result["ipw_kendall_tau"] == pytest.approx(kendall_by_hand(ipw, r), abs=1e-12)
    assert result["clipped_kendall_tau"] == pytest.approx(kendall_by_hand(clipped, r), abs=1e-12)
    production = logs.production_scores.tolist()
    assert result["production_kendall_tau"] == pytest.approx(kendall_by_hand(production, r))
    assert result["naive_ndcg"] == pytest.approx(ndcg_by_hand(naive, r, 5), abs=1e-12)
    assert result["ipw_ndcg"] == pytest.approx(ndcg_by_hand(ipw, r, 5), abs=1e-12)
    assert result["production_ndcg"] == pytest.approx(ndcg_by_hand(production, r, 5), abs=1e-12)
    assert result["naive_mae"] == pytest.approx(np.mean(np.abs(np.subtract(naive, r))), abs=1e-12)
    assert result["ipw_mean_bias"] == pytest.approx(np.mean(np.subtract(ipw, r)), abs=1e-12)


def test_effective_sample_fraction_by_hand(cpu: torch.device) -> None:
    logs = logs_of(cpu, items=5, sessions=2000, eta=1.0, seed=1)
    clicks, theta = logs.clicks.numpy(), logs.propensities.numpy()
    weights = [1 / theta[k] for i in range(5) for k in range(5) for _ in range(int(clicks[i, k]))]
    kish = sum(weights) ** 2 / sum(w * w for w in weights) / len(weights)
    assert effective_sample_fraction(logs.clicks, logs.propensities.reciprocal()) == pytest.approx(
        kish, rel=1e-12
    )


def test_seeded_runs_repeat(run: RunDemo) -> None:
    first, again = run("position_bias", seed=11), run("position_bias", seed=11)
    assert first.outputs == again.outputs
    assert run("position_bias", seed=12).outputs["ipw_mae"] != first.outputs["ipw_mae"]


def test_theory_beside_the_measurement(run: RunDemo) -> None:
    result = run("position_bias")
    assert result.theory["ipw_mean_bias"] == 0.0
    # The measured naive bias sits within a few standard errors of its expectation.
    assert result.outputs["naive_mean_bias"] == pytest.approx(
        result.theory["naive_mean_bias"], abs=0.01
    )


def test_series(run: RunDemo) -> None:
    result = run("position_bias", items=6, clip=0.2, seed=1)
    series = {s.name: s for s in result.series}
    assert series["true relevance"].y == sorted(series["true relevance"].y, reverse=True)
    assert series["θ_k"].y == pytest.approx([1 / k for k in range(1, 7)])
    mse, bias2, variance = series["MSE"], series["bias²"], series["variance"]
    assert mse.y == pytest.approx([b + v for b, v in zip(bias2.y, variance.y, strict=True)])
    assert bias2.y[0] == pytest.approx(0.0, abs=1e-30)  # τ = 0.001 below every θ_k: unbiased
    assert result.outputs["best_clip"] == mse.x[mse.y.index(min(mse.y))]
    assert mse.y[-1] == pytest.approx(result.outputs["naive_rmse_expected"] ** 2)
    assert bias2.y == sorted(bias2.y)  # a higher floor only adds bias
    assert variance.y == sorted(variance.y, reverse=True)  # and only removes variance


# Card claims. Over 100 seeds: defaults (K 20, N 20,000, η 1, σ 0.3, 5% shuffled) naive
# mean bias −0.50 to −0.28, IPW mean bias −0.008 to 0.011, Kendall τ naive 0.46-0.90, IPW
# 0.905-1, estimated-propensity IPW 0.67-0.95, production 0.20-0.79, nDCG@5 IPW 0.986-1,
# ESS fraction 0.44-0.58, largest propensity error 0.018-0.079. K 30, N 1,000, η 2, 10%
# shuffled, τ 0.005: best floor 0.005 (0.01 in a few seeds), expected RMSE IPW 0.27-0.39,
# clipped 0.18-0.30, ESS fraction 0.034-0.119. K 30, N 20,000, η 2: best floor 0.001
# (0.002 in a few seeds), Kendall τ IPW 0.73-0.90, estimated-propensity IPW 0.31-0.71.
LOW_VOLUME = {"items": 30, "sessions": 1000, "eta": 2.0, "randomized_share": 0.1, "clip": 0.005}
STEEP = {"items": 30, "sessions": 20_000, "eta": 2.0}


@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "naive_mean_bias", -0.40, 0.13),
        ({}, "ipw_mean_bias", 0.0, 0.015),
        ({}, "naive_kendall_tau", 0.65, 0.26),
        ({}, "ipw_kendall_tau", 0.96, 0.06),
        ({}, "ipw_estimated_kendall_tau", 0.85, 0.19),
        ({}, "ipw_ndcg", 1.0, 0.015),
        ({}, "ess_fraction", 0.48, 0.11),
        ({}, "propensity_max_error", 0.03, 0.05),
        (LOW_VOLUME, "best_clip", 0.005, 0.003),  # a floor, not plain IPW (0.001)
        (LOW_VOLUME, "ipw_rmse_expected", 0.37, 0.11),
        (LOW_VOLUME, "clipped_rmse_expected", 0.27, 0.09),
        (LOW_VOLUME, "ess_fraction", 0.066, 0.055),
        (STEEP, "best_clip", 0.001, 0.001),
        (STEEP, "ipw_kendall_tau", 0.80, 0.11),
        (STEEP, "ipw_estimated_kendall_tau", 0.54, 0.25),
    ],
)
def test_card_claims(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    assert run("position_bias", **params).outputs[output] == pytest.approx(expected, abs=tolerance)


def test_card_comparisons_hold_seed_by_seed(run: RunDemo) -> None:
    # The card's tolerances overlap, so its two comparisons are checked directly: clipping
    # at τ 0.005 lowers the expected RMSE at low volume, and estimated propensities lose
    # Kendall's τ at 30 items and η 2 (both held in each of 100 seeds when measured).
    for seed in range(5):
        low = run("position_bias", **LOW_VOLUME, seed=seed).outputs
        assert low["clipped_rmse_expected"] < low["ipw_rmse_expected"]
        assert low["best_clip"] > 0.002  # a floor above plain IPW
        steep = run("position_bias", **STEEP, seed=seed).outputs
        assert steep["ipw_estimated_kendall_tau"] < steep["ipw_kendall_tau"]


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("position_bias").validate({"items": 4})
    assert caught.value.problems[0].message == (
        "cutoff must be at most items, got nDCG@5 of a 4-item list: lower cutoff to 4 or show "
        "more items"
    )
    for bad in (
        {"eta": 2.5},
        {"items": 1},
        {"sessions": 999},
        {"randomized_share": 0.005},
        {"clip": 0.0},
        {"seed": -1},
    ):
        response = client.post("/demos/position_bias", json=bad)
        assert response.status_code == 422
        assert response.json()["detail"][0]["param"] == next(iter(bad))
    response = client.post("/demos/position_bias", json={"items": 3, "cutoff": 4})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "cutoff"

"""``position_bias``: naive CTR against inverse propensity weighting on simulated click logs.

The simulation follows the position-based click model: an item at position k
is examined with probability θ_k = (1/k)^η, independently of the item, and
clicked when examined with probability equal to its relevance r_i, so
P(click) = θ_k · r_i. One list of K items with relevances drawn from
U(0.05, 0.95) is shown N times. A production ranker sorts the items by
r_i + N(0, σ²) noise drawn once, and shows that order in all but a small share
of sessions; the rest are shuffled uniformly (RandTopN over all K positions),
which is how the propensities are estimated.

Because only the position matters, each (item, position) cell's clicks are a
binomial draw on the number of sessions that showed the item there; every
estimator is a weighted sum of those cells:

- naive CTR: Σ_k c_ik / N;
- IPW: Σ_k c_ik / θ_k / N, whose expectation is r_i exactly (each click is
  divided by the probability that its position was examined);
- clipped IPW: Σ_k c_ik / max(θ_k, τ) / N, biased downwards but with smaller
  weights; τ = 1 gives the naive CTR back.

The estimated propensity at k is the shuffled sessions' click count at k over
that at rank 1: in shuffled traffic every item is equally likely at every
position, so the expected count at k is θ_k times the same mean relevance.
"""

import math
from dataclasses import dataclass

import torch
from scipy.stats import kendalltau  # type: ignore[import-untyped]
from sklearn.metrics import ndcg_score  # type: ignore[import-untyped]

from app.demos.specs import systems_position_bias as spec
from app.demos.specs.systems_position_bias import PositionBiasParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- computation --------------------------------------------------------------------------------

CLIP_GRID = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
"""Propensity floors of the bias–variance series."""


@dataclass(frozen=True)
class Logs:
    """The simulated click log, aggregated by (item, position); rows items, columns positions."""

    relevance: torch.Tensor  # r_i, shape (K,)
    production_scores: torch.Tensor  # r_i + noise: the order of the logged sessions
    propensities: torch.Tensor  # θ_k = (1/k)^η, shape (K,)
    shown_logged: torch.Tensor  # sessions that showed item i at position k, production order
    shown_randomized: torch.Tensor  # the same for the shuffled sessions
    clicks_logged: torch.Tensor
    clicks_randomized: torch.Tensor

    @property
    def shown(self) -> torch.Tensor:
        return self.shown_logged + self.shown_randomized

    @property
    def clicks(self) -> torch.Tensor:
        return self.clicks_logged + self.clicks_randomized


def propensities(items: int, eta: float) -> torch.Tensor:
    """θ_k = (1/k)^η for k = 1 … K.

    Example:
        >>> propensities(4, 1.0).tolist()
        [1.0, 0.5, 0.3333333333333333, 0.25]
    """
    ranks = torch.arange(1, items + 1, dtype=torch.float64)
    return ranks.reciprocal().pow(eta)


def shuffled_sessions(params: PositionBiasParams) -> int:
    """round(share × N): at least 10, since the bounds are share ≥ 0.01 and N ≥ 1,000."""
    return round(params.randomized_share * params.sessions)


def simulate(params: PositionBiasParams, device: torch.device) -> Logs:
    """Relevances, the production order, the shuffled sessions and every cell's clicks."""
    generator = seeded(device, params.seed)
    k = params.items
    fp64 = torch.float64
    relevance = 0.05 + 0.9 * torch.rand(k, generator=generator, dtype=fp64, device=device)
    noise = torch.randn(k, generator=generator, dtype=fp64, device=device)
    scores = relevance + params.ranker_noise * noise
    randomized = shuffled_sessions(params)
    logged = params.sessions - randomized

    shown_logged = torch.zeros(k, k, dtype=fp64, device=device)
    production_position = scores.argsort(descending=True).argsort()
    shown_logged[torch.arange(k, device=device), production_position] = float(logged)

    # A uniformly random permutation per shuffled session: order[s, j] is the item at position j.
    order = torch.rand(randomized, k, generator=generator, device=device).argsort(dim=1)
    cells = order * k + torch.arange(k, device=device)
    shown_randomized = torch.bincount(cells.flatten(), minlength=k * k).reshape(k, k).to(fp64)

    theta = propensities(k, params.eta).to(device)
    click_probability = relevance[:, None] * theta[None, :]
    clicks_logged = torch.binomial(shown_logged, click_probability, generator=generator)
    clicks_randomized = torch.binomial(shown_randomized, click_probability, generator=generator)
    return Logs(
        relevance=relevance,
        production_scores=scores,
        propensities=theta,
        shown_logged=shown_logged,
        shown_randomized=shown_randomized,
        clicks_logged=clicks_logged,
        clicks_randomized=clicks_randomized,
    )


def weighted_estimate(clicks: torch.Tensor, weights: torch.Tensor, sessions: int) -> torch.Tensor:
    """Σ_k c_ik · w_k / N for each item: w = 1 is the CTR, w = 1/θ is IPW.

    Example:
        >>> clicks = torch.tensor([[3.0, 1.0], [0.0, 2.0]], dtype=torch.float64)
        >>> weighted_estimate(clicks, torch.tensor([1.0, 4.0], dtype=torch.float64), 10).tolist()
        [0.7, 0.8]
    """
    return (clicks * weights[None, :]).sum(dim=1) / sessions


def estimated_propensities(clicks_randomized: torch.Tensor, randomized: int) -> torch.Tensor:
    """θ̂_k = clicks at k / clicks at rank 1 in the shuffled sessions, floored at 1/n_shuffled.

    The floor keeps a position without a single shuffled click from getting an
    infinite weight; the rank-1 count is at least 1 for the same reason.
    """
    per_position = clicks_randomized.sum(dim=0)
    return (per_position / per_position[0].clamp(min=1.0)).clamp(min=1.0 / randomized)


def effective_sample_fraction(clicks: torch.Tensor, weights: torch.Tensor) -> float:
    """Kish's (Σw)² / Σw² over every click, divided by the number of clicks.

    Example:
        >>> clicks = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
        >>> effective_sample_fraction(clicks, torch.tensor([1.0, 3.0], dtype=torch.float64))
        0.8
    """
    total = clicks.sum()
    if total == 0:
        return 1.0
    first = (clicks * weights[None, :]).sum()
    second = (clicks * weights[None, :] ** 2).sum()
    return (first**2 / (second * total)).item()


@dataclass(frozen=True)
class Expected:
    """Closed-form moments of a weighted estimator given where each item was shown."""

    mean: torch.Tensor  # E[estimate_i]
    variance: torch.Tensor  # Var[estimate_i]

    def bias(self, relevance: torch.Tensor) -> torch.Tensor:
        return self.mean - relevance

    def mse(self, relevance: torch.Tensor) -> torch.Tensor:
        return self.bias(relevance) ** 2 + self.variance


def expected_moments(logs: Logs, weights: torch.Tensor, sessions: int) -> Expected:
    """E and Var of Σ_k c_ik w_k / N with c_ik ~ Binomial(n_ik, θ_k r_i), independent cells."""
    p = logs.relevance[:, None] * logs.propensities[None, :]
    n = logs.shown
    mean = (n * p * weights[None, :]).sum(dim=1) / sessions
    variance = (n * p * (1 - p) * weights[None, :] ** 2).sum(dim=1) / sessions**2
    return Expected(mean, variance)


def kendall(estimate: torch.Tensor, truth: torch.Tensor) -> float:
    """Kendall's τ-b (SciPy); 0 when an input is constant and τ is undefined."""
    tau = float(kendalltau(estimate.cpu().numpy(), truth.cpu().numpy()).statistic)
    return 0.0 if math.isnan(tau) else tau


def ndcg(estimate: torch.Tensor, truth: torch.Tensor, cutoff: int) -> float:
    """nDCG@k of the list sorted by ``estimate``, ``truth`` as gains (scikit-learn)."""
    return float(ndcg_score(truth.cpu().numpy()[None], estimate.cpu().numpy()[None], k=cutoff))


def compute(params: PositionBiasParams, device: torch.device) -> Outcome:
    """Simulate the log, estimate each item's relevance four ways, and score the estimates."""
    logs = simulate(params, device)
    n = params.sessions
    truth, theta = logs.relevance, logs.propensities
    ones = torch.ones_like(theta)
    inverse = theta.reciprocal()
    clipped_weights = theta.clamp(min=params.clip).reciprocal()
    randomized = shuffled_sessions(params)
    theta_hat = estimated_propensities(logs.clicks_randomized, randomized)

    naive = weighted_estimate(logs.clicks, ones, n)
    ipw = weighted_estimate(logs.clicks, inverse, n)
    ipw_estimated = weighted_estimate(logs.clicks, theta_hat.reciprocal(), n)
    clipped = weighted_estimate(logs.clicks, clipped_weights, n)
    naive_expected = expected_moments(logs, ones, n)
    ipw_expected = expected_moments(logs, inverse, n)
    clipped_expected = expected_moments(logs, clipped_weights, n)

    def mae(estimate: torch.Tensor) -> float:
        return (estimate - truth).abs().mean().item()

    def bias(estimate: torch.Tensor) -> float:
        return (estimate - truth).mean().item()

    def rmse(expected: Expected) -> float:
        return math.sqrt(expected.mse(truth).mean().item())

    squared_bias, variance = clip_sweep(logs, n)
    mse = [b + v for b, v in zip(squared_bias, variance, strict=True)]
    outputs = {
        "naive_mae": mae(naive),
        "ipw_mae": mae(ipw),
        "ipw_estimated_mae": mae(ipw_estimated),
        "clipped_mae": mae(clipped),
        "naive_mean_bias": bias(naive),
        "ipw_mean_bias": bias(ipw),
        "clipped_mean_bias": bias(clipped),
        "naive_kendall_tau": kendall(naive, truth),
        "ipw_kendall_tau": kendall(ipw, truth),
        "ipw_estimated_kendall_tau": kendall(ipw_estimated, truth),
        "clipped_kendall_tau": kendall(clipped, truth),
        "production_kendall_tau": kendall(logs.production_scores, truth),
        "naive_ndcg": ndcg(naive, truth, params.cutoff),
        "ipw_ndcg": ndcg(ipw, truth, params.cutoff),
        "production_ndcg": ndcg(logs.production_scores, truth, params.cutoff),
        "propensity_max_error": (theta_hat - theta).abs().max().item(),
        "ess_fraction": effective_sample_fraction(logs.clicks, inverse),
        "clipped_ess_fraction": effective_sample_fraction(logs.clicks, clipped_weights),
        "naive_rmse_expected": rmse(naive_expected),
        "ipw_rmse_expected": rmse(ipw_expected),
        "clipped_rmse_expected": rmse(clipped_expected),
        "best_clip": CLIP_GRID[mse.index(min(mse))],
    }
    return Outcome(
        outputs=outputs,
        theory={
            "naive_mean_bias": naive_expected.bias(truth).mean().item(),
            "ipw_mean_bias": 0.0,
            "clipped_mean_bias": clipped_expected.bias(truth).mean().item(),
        },
        series=[
            *_estimate_bars(truth, naive, ipw, clipped),
            *_propensity_lines(theta, theta_hat),
            *_clip_series(squared_bias, variance),
        ],
        notes=NOTES,
    )


NOTES = [
    "Clicks follow the position-based model: P(click at k) = θ_k · relevance, θ_k = (1/k)^η, "
    "the same for every item; real users also follow cascade and trust effects this model "
    "leaves out.",
    "Theory for the mean biases: their expectations given where each item was shown; IPW's is "
    "0 because each click is divided by the probability its position was examined.",
    "The propensities are estimated only up to the rank-1 value, θ̂_k = θ_k / θ_1; with "
    "θ_1 = 1 here the ratio is the propensity itself.",
    "The expected RMSEs are closed forms (bias² plus binomial variance, averaged over items), "
    "not measured over seeds.",
]


def _estimate_bars(
    truth: torch.Tensor, naive: torch.Tensor, ipw: torch.Tensor, clipped: torch.Tensor
) -> list[Series]:
    """True relevance and the three estimates, items in order of true relevance."""
    order = truth.argsort(descending=True)
    labels = [str(i + 1) for i in range(truth.numel())]
    return [
        Series(
            name=name,
            kind="bar",
            x=labels,
            y=values[order].tolist(),
            x_label="item (by true relevance)",
            y_label="relevance or its estimate",
        )
        for name, values in (
            ("true relevance", truth),
            ("naive CTR", naive),
            ("IPW", ipw),
            ("clipped IPW", clipped),
        )
    ]


def _propensity_lines(theta: torch.Tensor, theta_hat: torch.Tensor) -> list[Series]:
    """True and estimated examination propensity against position."""
    positions = [float(k + 1) for k in range(theta.numel())]
    return [
        Series(
            name=name,
            kind="line",
            x=positions,
            y=values.tolist(),
            x_label="position k",
            y_label="examination propensity",
        )
        for name, values in (("θ_k", theta), ("θ̂_k (shuffled sessions)", theta_hat))
    ]


def clip_sweep(logs: Logs, sessions: int) -> tuple[list[float], list[float]]:
    """Expected bias² and variance, each averaged over items, for every floor in CLIP_GRID."""
    squared_bias, variance = [], []
    for floor in CLIP_GRID:
        moments = expected_moments(logs, logs.propensities.clamp(min=floor).reciprocal(), sessions)
        squared_bias.append((moments.bias(logs.relevance) ** 2).mean().item())
        variance.append(moments.variance.mean().item())
    return squared_bias, variance


def _clip_series(squared_bias: list[float], variance: list[float]) -> list[Series]:
    """Expected bias², variance and MSE (mean over items) against the propensity floor τ."""
    mse = [b + v for b, v in zip(squared_bias, variance, strict=True)]
    return [
        Series(
            name=name,
            kind="line",
            x=CLIP_GRID,
            y=values,
            x_label="propensity floor τ (1 = naive CTR)",
            y_label="mean over items",
        )
        for name, values in (("bias²", squared_bias), ("variance", variance), ("MSE", mse))
    ]


# --- the demo -----------------------------------------------------------------------------------

POSITION_BIAS = Demo(spec=spec.POSITION_BIAS, compute=compute)

"""``bagging_variance``: the variance of an average of B correlated estimators, ρσ² + (1 − ρ)σ²/B.

Each draw makes B estimators T_b = √(ρσ²)·S + √((1 − ρ)σ²)·E_b from one shared
N(0, 1) variable S and B independent ones E_b, so that every T_b has variance
σ² and every pair covariance ρσ². The demo measures the variance of their
average over ``draws`` draws, against ESL eq. (15.1):
Var(T̄) = ρσ² + (1 − ρ)σ²/B, which tends to ρσ², not 0, as B grows.

With ``trees`` it also fits real ensembles, as ESL §15.4.1 defines ρ(x): the
correlation at a point x between two trees of one ensemble, over training
sets. Each of ``training_sets`` training sets of 100 rows comes from ESL's
model (15.8), Y = (1/√50)·ΣX_j + ε with 50 N(0, 1) features; scikit-learn's
``BaggingRegressor`` (bagged trees) or ``RandomForestRegressor(max_features=m)``
is fitted on each, and every tree predicts at 50 fixed test points.
"""

import math

import numpy as np
import torch
from sklearn.ensemble import BaggingRegressor, RandomForestRegressor  # type: ignore[import-untyped]

from app.demos.specs import classical_bagging_variance as spec
from app.demos.specs.classical_bagging_variance import TREE_FEATURES, BaggingVarianceParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import row_chunks
from app.worker.device import seeded

# --- computation --------------------------------------------------------------------------------

TREE_ROWS = 100
TEST_POINTS = 50
SERIES_POINTS = 40


def average_variance(rho: float, sigma2: float, estimators: int) -> float:
    """ESL eq. (15.1): ρσ² + (1 − ρ)σ²/B.

    Example:
        >>> round(average_variance(0.3, 1.0, 10), 6)
        0.37
    """
    return rho * sigma2 + (1 - rho) * sigma2 / estimators


def sizes(estimators: int) -> list[int]:
    """Ensemble sizes for the series: about SERIES_POINTS sizes from 1 to B, log-spaced.

    Example:
        >>> sizes(5)
        [1, 2, 3, 4, 5]
    """
    grid = np.unique(np.round(np.geomspace(1, estimators, SERIES_POINTS)).astype(int))
    return [int(b) for b in grid]


def equicorrelated_moments(
    params: BaggingVarianceParams, generator: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Variances (unbiased) of each estimator and of the average of the first b, for every b.

    The draws are made a chunk of rows at a time; sums of values and squares
    are kept in fp64, so memory does not grow with ``draws``.
    """
    b = params.estimators
    shared_scale = math.sqrt(params.rho * params.sigma2)
    own_scale = math.sqrt((1 - params.rho) * params.sigma2)
    width = torch.arange(1, b + 1, dtype=torch.float64, device=device)
    sums = torch.zeros(4, b, dtype=torch.float64, device=device)
    for start, stop in row_chunks(params.draws, b + 1):
        shared = torch.randn(
            stop - start, 1, generator=generator, dtype=torch.float64, device=device
        )
        own = torch.randn(stop - start, b, generator=generator, dtype=torch.float64, device=device)
        values = shared_scale * shared + own_scale * own
        prefix = values.cumsum(1) / width  # average of the first b estimators, for each b
        sums += torch.stack([values.sum(0), (values**2).sum(0), prefix.sum(0), (prefix**2).sum(0)])
    count = params.draws
    variances = (sums[1::2] - sums[0::2] ** 2 / count) / (count - 1)
    return variances[0], variances[1]


def tree_predictions(params: BaggingVarianceParams, generator: torch.Generator) -> np.ndarray:
    """Predictions (training set, tree, test point) of every tree of every fitted ensemble."""
    p = TREE_FEATURES

    def normal(*shape: int) -> np.ndarray:
        return torch.randn(*shape, generator=generator, dtype=torch.float64).numpy()

    x_test = normal(TEST_POINTS, p)
    predictions = np.empty((params.training_sets, params.estimators, TEST_POINTS))
    for s in range(params.training_sets):
        x = normal(TREE_ROWS, p)
        y = x.sum(1) / math.sqrt(p) + normal(TREE_ROWS)  # ESL's model (15.8)
        state = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        if params.trees == "bagging":
            bagging = BaggingRegressor(n_estimators=params.estimators, random_state=state)
            bagging.fit(x, y)
            pairs = zip(bagging.estimators_, bagging.estimators_features_, strict=True)
            predictions[s] = [tree.predict(x_test[:, kept]) for tree, kept in pairs]
        else:
            forest = RandomForestRegressor(
                n_estimators=params.estimators,
                max_features=params.max_features,
                random_state=state,
            ).fit(x, y)
            predictions[s] = [tree.predict(x_test) for tree in forest.estimators_]
    return predictions


def tree_statistics(predictions: np.ndarray) -> dict[str, float]:
    """ρ(x), one tree's variance and the ensemble average's variance, over training sets.

    ρ at each test point is the mean correlation, over pairs of trees, of the
    two trees' predictions across training sets (ESL eq. 15.6); the three are
    averaged over the test points.
    """
    _, trees, points = predictions.shape
    rho = []
    for j in range(points):
        corr = np.corrcoef(predictions[:, :, j].T)
        rho.append(corr[np.triu_indices(trees, 1)].mean())
    return {
        "tree_rho": float(np.mean(rho)),
        "tree_variance": float(predictions.var(axis=0, ddof=1).mean()),
        "tree_average_variance": float(predictions.mean(axis=1).var(axis=0, ddof=1).mean()),
    }


def compute(params: BaggingVarianceParams, device: torch.device) -> Outcome:
    """Measure the variance of the average against (15.1); fit trees when asked."""
    generator = seeded(device, params.seed)
    single, prefix = equicorrelated_moments(params, generator, device)
    b = params.estimators
    theory_value = average_variance(params.rho, params.sigma2, b)
    outputs = {
        "variance_of_average": float(prefix[-1]),
        "single_variance": float(single.mean()),
        "floor": params.rho * params.sigma2,
        "relative_error": float(prefix[-1]) / theory_value - 1,
    }
    theory = {
        "variance_of_average": theory_value,
        "single_variance": params.sigma2,
        "floor": params.rho * params.sigma2,
        "relative_error": 0.0,
    }
    if b > 1:
        # Var(ΣT_b) = Σ Var T_b + Σ_{b≠c} Cov(T_b, T_c): the mean covariance over the mean variance.
        total = float(prefix[-1]) * b * b
        outputs["measured_rho"] = (total - float(single.sum())) / ((b - 1) * float(single.sum()))
        theory["measured_rho"] = params.rho
    series = _average_series(prefix, params)
    notes = [
        "Each draw shares one N(0, 1) variable across the B estimators (weight √ρ) and adds "
        "an independent one to each (weight √(1 − ρ)): every pair has correlation ρ.",
    ]
    if params.trees != "none":
        stats = tree_statistics(tree_predictions(params, seeded(torch.device("cpu"), params.seed)))
        outputs.update(stats)
        outputs["tree_floor"] = stats["tree_rho"] * stats["tree_variance"]
        theory["tree_average_variance"] = average_variance(
            stats["tree_rho"], stats["tree_variance"], b
        )
        notes.append(
            "The trees' theory is (15.1) with their measured ρ and σ²: it checks the formula, "
            "not the numbers themselves. ρ is measured over training sets at fixed points, as "
            "ESL defines it, not between the trees of one fitted forest across points."
        )
    return Outcome(outputs=outputs, theory=theory, series=series, notes=notes)


def _average_series(prefix: torch.Tensor, params: BaggingVarianceParams) -> list[Series]:
    """Measured variance of the average of the first b estimators, for b from 1 to B."""
    chosen = sizes(params.estimators)
    return [
        Series(
            name="measured",
            kind="line",
            x=[float(b) for b in chosen],
            y=[float(prefix[b - 1]) for b in chosen],
            x_label="estimators averaged B",
            y_label="variance of the average",
        ),
        Series(
            name="ρσ² + (1 − ρ)σ²/B",
            kind="line",
            x=[float(b) for b in chosen],
            y=[average_variance(params.rho, params.sigma2, b) for b in chosen],
            x_label="estimators averaged B",
            y_label="variance of the average",
        ),
    ]


# --- the demo -----------------------------------------------------------------------------------

BAGGING_VARIANCE = Demo(spec=spec.BAGGING_VARIANCE, compute=compute)

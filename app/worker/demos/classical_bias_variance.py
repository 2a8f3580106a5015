"""``bias_variance``: squared bias, variance and noise of polynomial fits add up to the test MSE.

The true function is f(x) = sin 2πx at ``n`` inputs evenly spaced on [0, 1],
held fixed; each of ``trainings`` training sets draws new labels
y = f(x) + ε, ε ~ N(0, σ²), and is fitted by least squares
(``torch.linalg.lstsq``) with a polynomial of the chosen degree, written in
the Legendre basis on [−1, 1] (``numpy.polynomial.legendre.legvander``) so that
degree 15 stays well conditioned. The fits are scored at the same inputs
against fresh labels. With ``P`` the fits (points × sets):

- bias² = mean over points of (mean over sets of P − f)²,
- variance = mean over points of the variance of P over sets (divided by the
  number of sets, so bias² + variance is exactly the mean of (P − f)²),
- noise = mean of (y_new − f)², whose expectation is σ².

Theory (ESL §7.3, eqs. 7.9 and 7.12): the expected test error is
σ² + bias² + variance. Least squares is linear in the labels, so with H the
projection onto the polynomials at these inputs the average fit is H f
exactly: bias² = |f − H f|² / n, variance = (p / n)·σ² with p = degree + 1,
and the expected training error is bias² + (1 − p / n)·σ².
"""

import math

import torch
from numpy.polynomial import legendre

from app.demos.specs import classical_bias_variance as spec
from app.demos.specs.classical_bias_variance import MAX_DEGREE, BiasVarianceParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- computation --------------------------------------------------------------------------------


def inputs_and_truth(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed inputs (evenly spaced on [0, 1]) and the true function sin 2πx there.

    Example:
        >>> x, f = inputs_and_truth(5, torch.device("cpu"))
        >>> x.tolist(), [round(v, 6) + 0.0 for v in f.tolist()]
        ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 1.0, 0.0, -1.0, 0.0])
    """
    x = torch.linspace(0.0, 1.0, n, dtype=torch.float64, device=device)
    return x, torch.sin(2 * math.pi * x)


def design(x: torch.Tensor, degree: int) -> torch.Tensor:
    """Legendre polynomials P_0 … P_degree of 2x − 1, one column each (spans the same polynomials
    as 1, x, …, x^degree, better conditioned)."""
    basis = legendre.legvander(2 * x.cpu().numpy() - 1, degree)
    # A copy in torch's own (aligned) memory: BLAS results may depend on alignment.
    return torch.tensor(basis, dtype=torch.float64, device=x.device)


def theory_terms(x: torch.Tensor, f: torch.Tensor, degree: int, noise: float) -> dict[str, float]:
    """Closed forms at fixed inputs, p = degree + 1 and H the least-squares projection.

    bias² = |f − Hf|² / n, variance = pσ²/n, test MSE = σ² + bias² + variance,
    training MSE = bias² + (1 − p/n)σ².

    Example:
        >>> x, f = inputs_and_truth(20, torch.device("cpu"))
        >>> round(theory_terms(x, f, 1, 0.3)["variance"], 6)   # (2 / 20) × 0.09
        0.009
    """
    n, p = f.numel(), degree + 1
    q, _ = torch.linalg.qr(design(x, degree))
    bias2 = float(((f - q @ (q.T @ f)) ** 2).mean())
    variance = p / n * noise**2
    return {
        "bias2": bias2,
        "variance": variance,
        "noise": noise**2,
        "test_mse": noise**2 + bias2 + variance,
        "train_mse": bias2 + (1 - p / n) * noise**2,
    }


def scores(
    fits: torch.Tensor, f: torch.Tensor, y: torch.Tensor, y_new: torch.Tensor
) -> dict[str, float]:
    """bias², variance, test and training MSE of ``fits`` (points × sets)."""
    return {
        "bias2": float(((fits.mean(1) - f) ** 2).mean()),
        "variance": float(fits.var(1, correction=0).mean()),
        "test_mse": float(((y_new - fits) ** 2).mean()),
        "train_mse": float(((y - fits) ** 2).mean()),
    }


def draw(
    params: BiasVarianceParams, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs x, truth f, training labels and fresh test labels (points × sets), fp64."""
    generator = seeded(device, params.seed)
    x, f = inputs_and_truth(params.n, device)
    labels = [
        f[:, None]
        + params.noise
        * torch.randn(
            params.n, params.trainings, generator=generator, dtype=torch.float64, device=device
        )
        for _ in range(2)
    ]
    return x, f, labels[0], labels[1]


def compute(params: BiasVarianceParams, device: torch.device) -> Outcome:
    """Fit every training set, score the fits, and set the closed forms beside them."""
    x, f, y, y_new = draw(params, device)
    basis = design(x, params.degree)
    # gelsd (SVD): the CPU default gelsy gave two different last digits for the same input;
    # CUDA has only gels (QR), fine for these full-rank designs.
    driver = "gelsd" if device.type == "cpu" else "gels"
    fits = basis @ torch.linalg.lstsq(basis, y, driver=driver).solution
    measured = scores(fits, f, y, y_new)
    noise = float(((y_new - f[:, None]) ** 2).mean())
    decomposition = measured["bias2"] + measured["variance"] + noise
    theory = theory_terms(x, f, params.degree, params.noise)
    sweep = _degree_sweep(x, f, y, y_new, params.noise)
    best = min(sweep, key=lambda d: sweep[d]["test_mse"])
    best_theory = min(sweep, key=lambda d: sweep[d]["theory_test_mse"])
    return Outcome(
        outputs={
            **{key: measured[key] for key in ("bias2", "variance")},
            "noise": noise,
            "decomposition": decomposition,
            "test_mse": measured["test_mse"],
            "decomposition_gap": measured["test_mse"] - decomposition,
            "train_mse": measured["train_mse"],
            "coefficients": float(params.degree + 1),
            "best_degree": float(best),
        },
        theory={
            **theory,
            "decomposition": theory["test_mse"],
            "decomposition_gap": 0.0,
            "coefficients": float(params.degree + 1),
            "best_degree": float(best_theory),
        },
        series=_series(sweep),
        notes=[
            "The inputs are fixed and only the noise is redrawn, as in ESL's least-squares "
            "example (eq. 7.12); the test points are those inputs, so variance = (p/n)σ² holds "
            "exactly in expectation.",
            "The curves over degrees score the same training sets from their coordinates in "
            "nested orthonormal bases (a QR of the Legendre columns): the same least-squares "
            "fits, without a refit per degree.",
        ],
    )


def _degree_sweep(
    x: torch.Tensor, f: torch.Tensor, y: torch.Tensor, y_new: torch.Tensor, noise: float
) -> dict[int, dict[str, float]]:
    """Scores for every degree from 0 to min(MAX_DEGREE, n − 1) on the same training sets.

    The first d + 1 columns of Q (a QR of the Legendre columns) are an
    orthonormal basis of the polynomials of degree d, so the fit of degree d
    has coordinates C = Qᵀy in its first d + 1 rows, and each score is a
    running sum over rows (Pythagoras), with no refit and no (points × sets)
    temporaries: training error |y|² − |C|², variance the spread of C over
    sets, bias² |f − Q c̄|², test error |y_new|² − 2⟨Qᵀy_new, C⟩ + |C|².
    """
    n, sets = y.shape
    top = min(MAX_DEGREE, n - 1)
    q, _ = torch.linalg.qr(design(x, top))
    coords, coords_new, coords_f = q.T @ y, q.T @ y_new, q.T @ f
    mean = coords.mean(1)
    cells = n * sets
    power = torch.cumsum((coords**2).sum(1), 0) / cells
    spread = torch.cumsum(coords.var(1, correction=0), 0) / n
    cross = torch.cumsum((coords * coords_new).sum(1), 0) / cells
    bias2 = (float((f**2).sum()) - torch.cumsum(2 * mean * coords_f - mean**2, 0)) / n
    truth = (float((f**2).sum()) - torch.cumsum(coords_f**2, 0)) / n
    sum_y, sum_new = float((y**2).sum()) / cells, float((y_new**2).sum()) / cells
    return {
        d: {
            "bias2": float(bias2[d]),
            "variance": float(spread[d]),
            "test_mse": sum_new - 2 * float(cross[d]) + float(power[d]),
            "train_mse": sum_y - float(power[d]),
            "theory_test_mse": noise**2 + float(truth[d]) + (d + 1) / n * noise**2,
        }
        for d in range(top + 1)
    }


def _series(sweep: dict[int, dict[str, float]]) -> list[Series]:
    degrees = [float(d) for d in sweep]
    curves = [
        ("squared bias", "bias2"),
        ("variance", "variance"),
        ("test MSE (fresh labels)", "test_mse"),
        ("training MSE", "train_mse"),
        ("σ² + bias² + pσ²/n (theory)", "theory_test_mse"),
    ]
    return [
        Series(
            name=name,
            kind="line",
            x=degrees,
            y=[sweep[int(d)][key] for d in degrees],
            x_label="polynomial degree",
            y_label="squared error",
        )
        for name, key in curves
    ]


# --- the demo -----------------------------------------------------------------------------------

BIAS_VARIANCE = Demo(spec=spec.BIAS_VARIANCE, compute=compute)

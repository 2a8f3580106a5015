"""``regularization_path``: the lasso's exact zeros along its path, and ridge's none.

A sparse linear truth: the first k of p coefficients are nonzero (sizes from 3
down to 0.5, alternating in sign), y = Xβ + ε. Rows of X are Gaussian with
corr(x_i, x_j) = ρ^|i − j| (neighbouring features most correlated), or the
columns are made orthogonal with XᵀX = nI. Everything is drawn with torch and
fitted with scikit-learn, without intercepts (the truth has none):

- the lasso by ``lasso_path`` (coordinate descent; objective
  (1/2n)|y − Xw|² + alpha·|w|₁) on a grid from alpha_max = max_j |x_jᵀy|/n,
  where every coefficient is zero, down to alpha_max / 100, with the chosen
  alpha added to the grid;
- ridge by ``Ridge(alpha = alpha × n)``, whose objective |y − Xw|² + alpha·n·|w|²
  is n times (1/2n)|y − Xw|² + (alpha/2)|w|²: the same data term as the lasso's.

Checks beside the measurement: the lasso's optimality (KKT) conditions, the
soft-threshold closed form sign(b)(|b| − alpha)₊ and ridge's b / (1 + alpha)
for an orthonormal design (ESL Table 3.4, b = Xᵀy/n), and ridge's normal
equations (XᵀX + n·alpha·I)w = Xᵀy in torch.
"""

import math
import warnings
from collections.abc import Callable

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning  # type: ignore[import-untyped]
from sklearn.linear_model import Ridge, lasso_path  # type: ignore[import-untyped]

from app.demos.specs import classical_regularization_path as spec
from app.demos.specs.classical_regularization_path import RegularizationPathParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- computation --------------------------------------------------------------------------------

TEST_ROWS = 5000
PATH_POINTS = 25
PATH_FLOOR = 0.01
"""The path runs from alpha_max down to alpha_max × PATH_FLOOR."""
TOL = 1e-10
"""lasso_path's tol: the duality gap must fall below tol × |y|²/n, tight enough that the zeros
are those of the exact solution."""
MAX_ITER = 10_000


def true_coefficients(features: int, informative: int) -> torch.Tensor:
    """The first ``informative`` coefficients from 3 down to 0.5, alternating in sign; the rest 0.

    Example:
        >>> true_coefficients(6, 5).tolist()
        [3.0, -2.375, 1.75, -1.125, 0.5, 0.0]
    """
    beta = torch.zeros(features, dtype=torch.float64)
    sizes = torch.linspace(3.0, 0.5, informative, dtype=torch.float64)
    signs = torch.tensor([(-1.0) ** j for j in range(informative)], dtype=torch.float64)
    beta[:informative] = sizes * signs
    return beta


def covariance(params: RegularizationPathParams) -> torch.Tensor:
    """Population covariance of a row: ρ^|i − j| (correlated), or I (orthonormal)."""
    index = torch.arange(params.features, dtype=torch.float64)
    if params.design == "orthonormal":
        return torch.eye(params.features, dtype=torch.float64)
    return params.correlation ** (index[:, None] - index[None, :]).abs()


def draw(
    params: RegularizationPathParams, device: torch.device
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training X, y and test X, y as numpy arrays (fp64)."""
    generator = seeded(device, params.seed)
    root = torch.linalg.cholesky(covariance(params)).to(device)
    beta = true_coefficients(params.features, params.informative).to(device)

    def rows(count: int) -> torch.Tensor:
        z = torch.randn(
            count, params.features, generator=generator, dtype=torch.float64, device=device
        )
        return torch.matmul(z, root.T)

    x = rows(params.samples)
    if params.design == "orthonormal":
        x = math.sqrt(params.samples) * torch.linalg.qr(x).Q
    x_test = rows(TEST_ROWS)

    def labels(inputs: torch.Tensor) -> torch.Tensor:
        noise = torch.randn(
            inputs.shape[0], generator=generator, dtype=torch.float64, device=device
        )
        return inputs @ beta + params.noise * noise

    y, y_test = labels(x), labels(x_test)
    return x.cpu().numpy(), y.cpu().numpy(), x_test.cpu().numpy(), y_test.cpu().numpy()


def fit_lasso_path(x: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """Coefficients (features × alphas, alphas in decreasing order) from sklearn's lasso_path."""
    with warnings.catch_warnings():
        # A path step that stops at MAX_ITER is reported by lasso_kkt_violation and a note.
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, coefs, _ = lasso_path(x, y, alphas=alphas, tol=TOL, max_iter=MAX_ITER)
    return np.asarray(coefs)


def kkt_violation(x: np.ndarray, y: np.ndarray, w: np.ndarray, alpha: float) -> float:
    """Largest violation of the lasso's optimality conditions, relative to alpha.

    With g = Xᵀ(y − Xw)/n: g_j = alpha·sign(w_j) where w_j ≠ 0, |g_j| ≤ alpha where w_j = 0.

    Example:
        >>> x = np.eye(2) * np.sqrt(2); y = np.array([3.0, 0.1]) * np.sqrt(2)  # b = (3, 0.1)
        >>> round(kkt_violation(x, y, np.array([2.0, 0.0]), 1.0), 12)  # its soft threshold at 1
        0.0
    """
    gradient = x.T @ (y - x @ w) / len(y)
    active = w != 0
    off = np.abs(gradient[active] - alpha * np.sign(w[active]))
    inside = np.maximum(np.abs(gradient[~active]) - alpha, 0.0)
    return float(np.concatenate([off, inside, [0.0]]).max() / alpha)


def ridge_normal_equations(x: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """(XᵀX + n·alpha·I)⁻¹Xᵀy for each alpha (features × alphas), in torch."""
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    n, p = xt.shape
    gram = xt.T @ xt
    eye = torch.eye(p, dtype=torch.float64)
    systems = gram[None] + n * torch.from_numpy(alphas)[:, None, None] * eye[None]
    rhs = (xt.T @ yt)[None, :, None].expand(len(alphas), p, 1)
    solutions: np.ndarray = torch.linalg.solve(systems, rhs)[..., 0].T.numpy()
    return solutions


def compute(params: RegularizationPathParams, device: torch.device) -> Outcome:
    """Fit the lasso path and ridge; count exact zeros; check both against their closed forms."""
    x, y, x_test, y_test = draw(params, device)
    n, alpha = params.samples, params.alpha
    alpha_max = float(np.max(np.abs(x.T @ y)) / n)
    path_alphas = alpha_max * np.geomspace(1, PATH_FLOOR, PATH_POINTS)
    grid = np.unique(np.r_[path_alphas, alpha])[::-1].copy()  # decreasing, as lasso_path fits
    path = fit_lasso_path(x, y, grid)
    lasso = path[:, int(np.flatnonzero(grid == alpha)[0])]
    ridge = Ridge(alpha=alpha * n, fit_intercept=False).fit(x, y).coef_
    beta = true_coefficients(params.features, params.informative).numpy()
    sigma = covariance(params).numpy()

    def expected_mse(w: np.ndarray) -> float:
        return float(params.noise**2 + (w - beta) @ sigma @ (w - beta))

    informative = params.informative
    outputs = {
        "alpha_max": alpha_max,
        "lasso_zeros": float(np.sum(lasso == 0)),
        "lasso_nonzeros": float(np.sum(lasso != 0)),
        "ridge_zeros": float(np.sum(ridge == 0)),
        "ridge_nonzeros": float(np.sum(ridge != 0)),
        "lasso_true_kept": float(np.sum(lasso[:informative] != 0)),
        "lasso_false_kept": float(np.sum(lasso[informative:] != 0)),
        "ridge_smallest": float(np.abs(ridge).min()),
        "lasso_test_mse": float(np.mean((y_test - x_test @ lasso) ** 2)),
        "ridge_test_mse": float(np.mean((y_test - x_test @ ridge) ** 2)),
        "lasso_kkt_violation": kkt_violation(x, y, lasso, alpha),
        "ridge_closed_form_gap": float(
            np.abs(ridge - ridge_normal_equations(x, y, np.array([alpha]))[:, 0]).max()
        ),
    }
    theory = {
        "ridge_zeros": 0.0,
        "lasso_test_mse": expected_mse(lasso),
        "ridge_test_mse": expected_mse(ridge),
        "lasso_kkt_violation": 0.0,
        "ridge_closed_form_gap": 0.0,
    }
    if params.design == "orthonormal":
        b = x.T @ y / n
        soft = np.sign(b) * np.maximum(np.abs(b) - alpha, 0.0)
        outputs["soft_threshold_gap"] = float(np.abs(lasso - soft).max())
        theory["soft_threshold_gap"] = 0.0
        theory["lasso_zeros"] = float(np.sum(soft == 0))
    if alpha >= alpha_max:
        theory["lasso_zeros"] = float(params.features)
    ridge_path = ridge_normal_equations(x, y, grid)
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_series(grid, path, ridge_path, expected_mse),
        notes=_notes(outputs["lasso_kkt_violation"]),
    )


def _notes(violation: float) -> list[str]:
    notes = [
        "scikit-learn's Lasso divides the squared error by 2n and Ridge does not divide it: "
        "the ridge fit here is Ridge(alpha = alpha × n), so that both share the data term "
        "(1/2n)|y − Xw|².",
        "Zeros are counted exactly (coefficient == 0.0): coordinate descent's soft-threshold "
        "update returns 0.0 itself, nothing is rounded.",
    ]
    if violation > 1e-3:
        notes.append(
            f"The solver stopped after {MAX_ITER:,} sweeps before converging (optimality "
            f"conditions off by {violation:.1%} of alpha): near-zero coefficients may be "
            "counted wrongly. This happens with p ≥ n at small alpha."
        )
    return notes


def _series(
    grid: np.ndarray,
    lasso: np.ndarray,
    ridge: np.ndarray,
    mse: Callable[[np.ndarray], float],
) -> list[Series]:
    """Nonzero coefficients and expected test MSE against log10 alpha, lasso and ridge."""
    x = np.log10(grid).tolist()
    out = []
    for name, coefs in (("lasso", lasso), ("ridge", ridge)):
        out.append(
            Series(
                name=f"{name}: nonzero coefficients",
                kind="line",
                x=x,
                y=[float(np.sum(c != 0)) for c in coefs.T],
                x_label="log10 alpha",
                y_label="nonzero coefficients",
            )
        )
    for name, coefs in (("lasso", lasso), ("ridge", ridge)):
        out.append(
            Series(
                name=f"{name}: σ² + (w − β)ᵀΣ(w − β)",
                kind="line",
                x=x,
                y=[mse(c) for c in coefs.T],
                x_label="log10 alpha",
                y_label="expected test MSE",
            )
        )
    return out


# --- the demo -----------------------------------------------------------------------------------

REGULARIZATION_PATH = Demo(spec=spec.REGULARIZATION_PATH, compute=compute)

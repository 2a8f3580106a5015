"""regularization_path: scikit-learn's lasso_path and Ridge against a hand-written coordinate
descent, Lasso, the SVD form of ridge and ESL's orthonormal closed forms.

Tolerances come from 30 seeds at each setting (docs/demos.md).
"""

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from sklearn.linear_model import Lasso

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_regularization_path import draw, true_coefficients
from tests.worker.conftest import RunDemo


def coordinate_descent(x: np.ndarray, y: np.ndarray, alpha: float, sweeps: int) -> np.ndarray:
    """The lasso by cyclic coordinate descent (Friedman et al. 2010), one soft threshold per step."""
    n, p = x.shape
    w = np.zeros(p)
    residual = y.copy()
    squares = (x**2).sum(axis=0) / n
    for _ in range(sweeps):
        for j in range(p):
            rho = x[:, j] @ residual / n + squares[j] * w[j]
            new = np.sign(rho) * max(abs(rho) - alpha, 0.0) / squares[j]
            residual -= x[:, j] * (new - w[j])
            w[j] = new
    return w


def training_data(
    params: dict[str, float | str], cpu: torch.device
) -> tuple[np.ndarray, np.ndarray]:
    """The X and y the demo fits for these parameters."""
    x, y, _, _ = draw(get_demo("regularization_path").validate(params), cpu)
    return x, y


@pytest.mark.parametrize(
    "params",
    [{}, {"alpha": 0.5}, {"correlation": 0.9, "alpha": 0.05}, {"features": 40, "samples": 30}],
)
def test_zeros_match_lasso_and_a_hand_written_coordinate_descent(
    run: RunDemo, cpu: torch.device, params: dict[str, float | str]
) -> None:
    x, y = training_data(params, cpu)
    alpha = params.get("alpha", 0.1)
    outputs = run("regularization_path", **params).outputs
    by_hand = coordinate_descent(x, y, alpha, sweeps=3000)
    sklearn = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(x, y).coef_
    assert np.array_equal(by_hand == 0, sklearn == 0)
    assert outputs["lasso_zeros"] == np.sum(by_hand == 0)
    assert outputs["lasso_nonzeros"] == np.sum(by_hand != 0)
    informative = 5
    assert outputs["lasso_true_kept"] == np.sum(by_hand[:informative] != 0)
    assert outputs["lasso_false_kept"] == np.sum(by_hand[informative:] != 0)
    assert outputs["lasso_kkt_violation"] < 1e-6


def test_orthonormal_design_gives_esl_closed_forms(run: RunDemo, cpu: torch.device) -> None:
    # ESL Table 3.4 with X'X = nI: lasso sign(b)(|b| - alpha)+, ridge b / (1 + alpha).
    params = {"design": "orthonormal", "alpha": 0.4}
    x, y = training_data(params, cpu)
    n = x.shape[0]
    assert x.T @ x == pytest.approx(n * np.eye(x.shape[1]), abs=1e-9)
    b = x.T @ y / n
    result = run("regularization_path", **params)
    assert result.outputs["soft_threshold_gap"] < 1e-8
    assert result.outputs["lasso_zeros"] == np.sum(np.abs(b) <= 0.4) == result.theory["lasso_zeros"]
    ridge = np.linalg.solve(x.T @ x + n * 0.4 * np.eye(x.shape[1]), x.T @ y)
    assert ridge == pytest.approx(b / 1.4, abs=1e-10)


def test_ridge_matches_its_svd_form_and_has_no_exact_zero(run: RunDemo, cpu: torch.device) -> None:
    for alpha in (0.001, 1.0, 100.0):
        outputs = run("regularization_path", alpha=alpha).outputs
        assert outputs["ridge_closed_form_gap"] < 1e-10
        assert outputs["ridge_zeros"] == 0
        assert outputs["ridge_nonzeros"] == 20
        assert outputs["ridge_smallest"] > 0
    # Second form: w = V diag(s / (s² + n·alpha)) Uᵀy from the SVD of X.
    x, y = training_data({}, cpu)
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    svd_ridge = vt.T @ (s / (s**2 + len(y) * 1.0) * (u.T @ y))
    normal = np.linalg.solve(x.T @ x + len(y) * 1.0 * np.eye(20), x.T @ y)
    assert svd_ridge == pytest.approx(normal, abs=1e-10)


def test_every_lasso_coefficient_is_zero_from_alpha_max(run: RunDemo) -> None:
    alpha_max = run("regularization_path").outputs["alpha_max"]
    above = run("regularization_path", alpha=alpha_max * 1.0001)
    assert above.outputs["lasso_zeros"] == 20 == above.theory["lasso_zeros"]
    below = run("regularization_path", alpha=alpha_max * 0.99).outputs
    assert below["lasso_nonzeros"] >= 1  # the first feature enters


def test_path_series(run: RunDemo) -> None:
    series = {s.name: s for s in run("regularization_path").series}
    lasso, ridge = series["lasso: nonzero coefficients"], series["ridge: nonzero coefficients"]
    assert lasso.y[0] == 0  # the path starts at alpha_max
    assert lasso.y[-1] > 10  # and ends with most features in, at alpha_max / 100
    assert set(ridge.y) == {20.0}
    assert lasso.x == sorted(lasso.x, reverse=True)  # log10 alpha, decreasing


# Defaults (p 20, k 5, n 100, ρ 0.5, alpha 0.1) over 30 seeds: 7-13 exact zeros, 4-5 of the
# 5 informative features kept; test MSE (5,000 rows) within 4% of σ² + (w - β)ᵀΣ(w - β).
def test_test_error_matches_its_population_value(run: RunDemo) -> None:
    result = run("regularization_path")
    for key in ("lasso_test_mse", "ridge_test_mse"):
        assert result.outputs[key] == pytest.approx(result.theory[key], rel=0.06)
    assert 7 <= result.outputs["lasso_zeros"] <= 13


def test_true_coefficients() -> None:
    beta = true_coefficients(10, 4).tolist()
    assert beta[:4] == pytest.approx([3.0, -3 + 2.5 / 3, 3 - 5 / 3, -0.5])
    assert beta[4:] == [0.0] * 6
    assert true_coefficients(3, 1).tolist() == [3.0, 0.0, 0.0]


def test_bad_parameters_are_refused(client: TestClient) -> None:
    demo = get_demo("regularization_path")
    with pytest.raises(InvalidParams) as caught:
        demo.validate({"features": 10, "samples": 5})
    assert caught.value.problems[0].param == "samples"
    with pytest.raises(InvalidParams) as caught:
        demo.validate({"features": 50, "samples": 40, "design": "orthonormal"})
    assert caught.value.problems[0].message == (
        "an orthonormal design needs samples ≥ features, got 40 < 50: raise samples to 50 or "
        "use the correlated design"
    )
    response = client.post("/demos/regularization_path", json={"features": 4, "informative": 6})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "informative"

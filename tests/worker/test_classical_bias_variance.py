"""bias_variance: torch's least-squares fits against NumPy's and scikit-learn's, and ESL's closed forms.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider
than the spread seen there.
"""

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from numpy.polynomial import chebyshev
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_bias_variance import draw
from tests.worker.conftest import RunDemo


def numpy_terms(
    x: np.ndarray, f: np.ndarray, y: np.ndarray, y_new: np.ndarray, degree: int
) -> dict[str, float]:
    """The same four numbers from NumPy's Chebyshev least squares (every training set at once)."""
    t = 2 * x - 1  # Chebyshev polynomials on [-1, 1]: well conditioned up to degree 15
    fits = chebyshev.chebval(t, chebyshev.chebfit(t, y, degree)).T  # (points, sets)
    return {
        "bias2": np.mean((fits.mean(axis=1) - f) ** 2),
        "variance": np.mean(fits.var(axis=1)),
        "test_mse": np.mean((y_new - fits) ** 2),
        "train_mse": np.mean((y - fits) ** 2),
    }


@pytest.mark.parametrize(("degree", "n"), [(0, 5), (1, 20), (3, 20), (9, 20), (15, 40)])
def test_fits_agree_with_numpy_chebfit(cpu: torch.device, degree: int, n: int) -> None:
    demo = get_demo("bias_variance")
    params = demo.validate({"degree": degree, "n": n, "trainings": 300, "seed": 3})
    x, f, y, y_new = (t.numpy() for t in draw(params, cpu))
    outputs = demo.run(params, cpu).outputs
    for key, value in numpy_terms(x, f, y, y_new, degree).items():
        assert outputs[key] == pytest.approx(value, rel=1e-7, abs=1e-12), key


def test_fits_agree_with_a_scikit_learn_pipeline(cpu: torch.device) -> None:
    demo = get_demo("bias_variance")
    params = demo.validate({"degree": 5, "n": 20, "trainings": 100, "seed": 1})
    x, f, y, _ = (t.numpy() for t in draw(params, cpu))
    model = make_pipeline(PolynomialFeatures(5), LinearRegression(fit_intercept=False))
    fits = np.column_stack([model.fit(x[:, None], y[:, s]).predict(x[:, None]) for s in range(100)])
    outputs = demo.run(params, cpu).outputs
    assert outputs["train_mse"] == pytest.approx(np.mean((y - fits) ** 2), rel=1e-8)
    assert outputs["variance"] == pytest.approx(np.mean(fits.var(axis=1)), rel=1e-8)
    assert outputs["bias2"] == pytest.approx(np.mean((fits.mean(axis=1) - f) ** 2), abs=1e-12)


@pytest.mark.parametrize(("degree", "n", "noise"), [(1, 20, 0.3), (3, 20, 0.3), (9, 50, 1.0)])
def test_theory_is_the_projection_of_the_truth(
    run: RunDemo, degree: int, n: int, noise: float
) -> None:
    # With fixed inputs the average fit is the least-squares fit to f itself, and the
    # hat matrix H has trace p: variance p·σ²/n, training error bias² + (1 - p/n)σ².
    x = np.linspace(0, 1, n)
    f = np.sin(2 * np.pi * x)
    vander = np.vander(x, degree + 1)
    hat = vander @ np.linalg.pinv(vander)
    bias2 = np.mean((hat @ f - f) ** 2)
    theory = run("bias_variance", degree=degree, n=n, noise=noise, trainings=100).theory
    assert theory["bias2"] == pytest.approx(bias2, rel=1e-6, abs=1e-12)
    assert theory["variance"] == pytest.approx(np.trace(hat) / n * noise**2, rel=1e-9)
    assert theory["train_mse"] == pytest.approx(bias2 + (1 - np.trace(hat) / n) * noise**2)
    assert theory["test_mse"] == pytest.approx(noise**2 + bias2 + np.trace(hat) / n * noise**2)


# The card's setting: n = 20, σ = 0.3, 5,000 training sets. Over 30 seeds: variance
# 0.0086-0.0093 (degree 1), 0.0172-0.0184 (3), 0.0260-0.0273 (5), 0.0438-0.0456 (9);
# test MSE 0.3282-0.3320, 0.1129-0.1147, 0.1159-0.1180, 0.1336-0.1361; decomposition gap
# within ±0.0019; bias² does not move (fixed inputs: the average fit is exact to 4 decimals).
@pytest.mark.parametrize(
    ("degree", "bias2", "variance", "test_mse"),
    [(1, 0.2313, 0.009, 0.330), (3, 0.0060, 0.018, 0.114), (5, 0.0, 0.027, 0.117),
     (9, 0.0, 0.045, 0.135)],
)  # fmt: skip
def test_the_three_terms_add_up_to_the_test_error(
    run: RunDemo, degree: int, bias2: float, variance: float, test_mse: float
) -> None:
    result = run("bias_variance", degree=degree)
    outputs = result.outputs
    assert outputs["bias2"] == pytest.approx(bias2, abs=0.0005)
    assert outputs["variance"] == pytest.approx(variance, abs=0.0015)
    assert outputs["test_mse"] == pytest.approx(test_mse, abs=0.003)
    assert outputs["decomposition"] == pytest.approx(outputs["test_mse"], abs=0.003)
    assert outputs["noise"] == pytest.approx(0.09, abs=0.002)
    assert result.theory["test_mse"] == pytest.approx(test_mse, abs=0.001)
    assert outputs["best_degree"] == 3 == result.theory["best_degree"]


def test_noiseless_fits_have_no_variance(run: RunDemo) -> None:
    outputs = run("bias_variance", degree=2, noise=0.0, trainings=100).outputs
    assert outputs["variance"] == pytest.approx(0.0, abs=1e-20)
    assert outputs["test_mse"] == pytest.approx(outputs["bias2"], rel=1e-9)


def test_curves_over_degrees_match_direct_fits(run: RunDemo) -> None:
    # The curves use running sums over an orthonormal basis; each degree must equal a refit.
    series = {s.name: s for s in run("bias_variance", degree=1, n=12, trainings=400).series}
    assert series["squared bias"].x == [float(d) for d in range(12)]
    for degree in (0, 4, 11):
        direct = run("bias_variance", degree=degree, n=12, trainings=400).outputs
        assert series["squared bias"].y[degree] == pytest.approx(direct["bias2"], abs=1e-12)
        assert series["variance"].y[degree] == pytest.approx(direct["variance"], rel=1e-9)
        test = series["test MSE (fresh labels)"].y[degree]
        assert test == pytest.approx(direct["test_mse"], rel=1e-9)
        assert series["training MSE"].y[degree] == pytest.approx(direct["train_mse"], abs=1e-12)
    training = series["training MSE"].y
    assert training == sorted(training, reverse=True)  # more coefficients, lower training error
    assert training[-1] == pytest.approx(0.0, abs=1e-20)  # degree n - 1 interpolates


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("bias_variance").validate({"degree": 9, "n": 8})
    assert caught.value.problems[0].message == (
        "n must be more than the degree (9): a polynomial of degree 9 has 10 coefficients and "
        "least squares needs at least as many points, got n = 8: raise n to 10 or more"
    )
    response = client.post("/demos/bias_variance", json={"n": 200, "trainings": 20_000})
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["param"] == "trainings"
    assert "lower trainings to 5242 or less" in problem["message"]

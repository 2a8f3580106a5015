"""pca_variance: torch's SVD against scikit-learn's PCA and NumPy, and both against the true spectrum.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from sklearn.decomposition import PCA

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_pca_variance import components_for, draw, spectrum
from tests.worker.conftest import RunDemo


@pytest.mark.parametrize(
    "raw",
    [{}, {"dimensions": 50, "samples": 30}, {"strong": 0, "offset": -5.0}, {"decay": 1.0}],
)
def test_torch_sklearn_and_numpy_agree_on_the_ratios(
    run: RunDemo, cpu: torch.device, raw: dict[str, float]
) -> None:
    demo = get_demo("pca_variance")
    params = demo.validate(raw)
    points = draw(params, cpu)[0].numpy()
    eigenvalues = np.linalg.eigvalsh(np.cov(points, rowvar=False))[::-1]
    ratios = eigenvalues / eigenvalues.sum()
    outputs = run("pca_variance", **raw).outputs
    assert outputs["sklearn_gap"] < 1e-12
    assert outputs["first_ratio"] == pytest.approx(ratios[0], rel=1e-9)
    k = params.components
    assert outputs["cumulative_ratio"] == pytest.approx(ratios[:k].sum(), rel=1e-9)
    assert outputs["total_variance"] == pytest.approx(eigenvalues.sum(), rel=1e-9)
    assert outputs["components_90"] == np.searchsorted(np.cumsum(ratios), 0.9 - 1e-12) + 1


@pytest.mark.parametrize("components", [1, 3, 10, 20])
def test_reconstruction_error_is_the_sum_of_the_dropped_eigenvalues(
    run: RunDemo, cpu: torch.device, components: int
) -> None:
    # Eckart-Young: the best rank-k fit leaves the squared singular values past k.
    params = get_demo("pca_variance").validate({"components": components})
    points = draw(params, cpu)[0].numpy()
    eigenvalues = np.linalg.eigvalsh(np.cov(points, rowvar=False))[::-1]
    outputs = run("pca_variance", components=components).outputs
    assert outputs["reconstruction_error"] == pytest.approx(
        eigenvalues[components:].sum(), rel=1e-8, abs=1e-9
    )
    # sklearn's own inverse_transform gives the same reconstruction.
    pca = PCA(n_components=components).fit(points)
    rebuilt = pca.inverse_transform(pca.transform(points))
    assert outputs["reconstruction_error"] == pytest.approx(
        ((points - rebuilt) ** 2).sum() / (len(points) - 1), rel=1e-8, abs=1e-9
    )


def test_the_true_spectrum_at_the_defaults() -> None:
    # λ = 10.1, 5.1, 2.6, then 17 × 0.1: total 19.5.
    params = get_demo("pca_variance").validate({})
    true = spectrum(params)
    assert true[:4].tolist() == pytest.approx([10.1, 5.1, 2.6, 0.1])
    assert float(true.sum()) == pytest.approx(19.5)
    ratios = true / true.sum()
    assert components_for(ratios, 0.9) == 3  # 17.8 / 19.5 = 0.913
    assert components_for(ratios, 0.95) == 11  # 17.8 + 8 × 0.1 = 18.6 ≥ 18.525


def test_the_basis_is_orthogonal_and_the_covariance_is_the_chosen_one(cpu: torch.device) -> None:
    params = get_demo("pca_variance").validate({"dimensions": 6, "samples": 100_000})
    points, basis = draw(params, cpu)
    assert basis.T @ basis == pytest.approx(torch.eye(6, dtype=torch.float64), abs=1e-12)
    expected = (basis * spectrum(params)) @ basis.T
    # Each entry of a sample covariance of 100,000 points scatters by about 0.02 here.
    assert torch.cov(points.T) == pytest.approx(expected, abs=0.1)


# At the defaults (2,000 points, 20 dimensions) over 30 seeds: first ratio 0.498-0.533
# (theory 0.518), cumulative 3 0.909-0.917 (0.913), top eigenvalue 9.58-10.60 (10.1),
# components_90 always 3, components_95 10-11 (11), reconstruction error 1.65-1.72 (1.7);
# uncentred first ratio within 0.012 of its theory (which depends on the seed's basis).
# With 100,000 points: first ratio 0.5157-0.5196, cumulative 0.9125-0.9132.
@pytest.mark.parametrize(
    ("params", "output", "tolerance"),
    [
        ({}, "first_ratio", 0.03),
        ({}, "cumulative_ratio", 0.01),
        ({}, "top_eigenvalue", 1.0),
        ({}, "reconstruction_error", 0.15),
        ({}, "uncentered_first_ratio", 0.03),
        ({"samples": 100_000}, "first_ratio", 0.004),
        ({"samples": 100_000}, "cumulative_ratio", 0.003),
    ],
)
def test_measured_ratios_near_the_true_ones(
    run: RunDemo, params: dict[str, float], output: str, tolerance: float
) -> None:
    result = run("pca_variance", **params)
    assert result.outputs[output] == pytest.approx(result.theory[output], abs=tolerance)


def test_counts_of_components_at_the_defaults(run: RunDemo) -> None:
    result = run("pca_variance")
    assert result.outputs["components_90"] == result.theory["components_90"] == 3
    assert result.outputs["components_95"] in (10, 11)


def test_forgetting_to_centre_lets_the_mean_take_the_first_component(run: RunDemo) -> None:
    centred = run("pca_variance", strong=0, offset=0.0).outputs
    offset = run("pca_variance", strong=0, offset=3.0)
    # Isotropic noise: each of 20 directions holds 1/20; a mean of 3 on every axis adds
    # |μ|² = 180 along μ, so the uncentred first "component" holds (180 + 0.1) / (180 + 2).
    assert centred["uncentered_first_ratio"] == pytest.approx(centred["first_ratio"], abs=0.01)
    assert offset.theory["uncentered_first_ratio"] == pytest.approx(180.1 / 182, rel=1e-9)
    assert offset.outputs["uncentered_first_ratio"] == pytest.approx(180.1 / 182, abs=0.002)
    assert offset.outputs["first_ratio"] == pytest.approx(0.05, abs=0.02)


def test_series_share_the_component_axis(run: RunDemo) -> None:
    series = {s.name: s for s in run("pca_variance").series}
    scree = series["torch SVD"]
    assert scree.y == pytest.approx(series["sklearn PCA"].y, abs=1e-12)
    assert series["torch SVD, cumulative"].y[-1] == pytest.approx(1.0)
    assert len(series["true spectrum"].x) == 20


def test_bad_parameters_are_refused(client: TestClient) -> None:
    demo = get_demo("pca_variance")
    with pytest.raises(InvalidParams) as caught:
        demo.validate({"dimensions": 5, "components": 6})
    assert caught.value.problems[0].message == "components must be at most dimensions (5), got 6"
    with pytest.raises(InvalidParams) as caught:
        demo.validate({"dimensions": 2})  # the default 3 strong directions do not fit
    assert [p.param for p in caught.value.problems] == ["strong", "components"]
    response = client.post("/demos/pca_variance", json={"dimensions": 256, "samples": 10_000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["message"].endswith("lower samples to 8192 or less")

"""``pca_variance``: explained variance of PCA on data with a known spectrum.

The points are Gaussian with covariance Σ = Q diag(λ) Qᵀ, Q a random
orthogonal basis (the QR factor of a Gaussian matrix) and
λ_i = noise + signal · decay^(i−1) for the first ``strong`` directions, noise
for the rest. PCA's explained-variance ratio of component i is the i-th
eigenvalue of the sample covariance over its trace, which is S_i² / Σ S_j²
for the singular values S of the centred data; its population value is
λ_i / Σ λ_j. Projecting onto the first k components and back leaves a squared
error of Σ_{i>k} S_i², so divided by n − 1 it is the sum of the dropped
eigenvalues of the sample covariance (Eckart–Young), with population value
Σ_{i>k} λ_i.

The measurement is ``torch.linalg.svdvals`` of the centred data; scikit-learn's
``PCA`` (``svd_solver="covariance_eigh"``: an eigendecomposition of the
covariance, another algorithm) must agree with it, and its components do the
reconstruction.
"""

import torch
from sklearn.decomposition import PCA  # type: ignore[import-untyped]
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from app.demos.specs import classical_pca_variance as spec
from app.demos.specs.classical_pca_variance import PcaVarianceParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded


def spectrum(params: PcaVarianceParams) -> torch.Tensor:
    """The true eigenvalues λ, largest first (fp64, on the CPU).

    Example:
        >>> from app.demos.specs.classical_pca_variance import PcaVarianceParams
        >>> spectrum(PcaVarianceParams(dimensions=5, strong=2)).tolist()
        [10.1, 5.1, 0.1, 0.1, 0.1]
    """
    values = torch.full((params.dimensions,), params.noise, dtype=torch.float64)
    steps = torch.arange(params.strong, dtype=torch.float64)
    values[: params.strong] += params.signal * params.decay**steps
    return values


def components_for(ratios: torch.Tensor, share: float) -> int:
    """Fewest leading components whose ratios add up to at least ``share``.

    Example:
        >>> components_for(torch.tensor([0.5, 0.3, 0.15, 0.05]), 0.9)
        3
    """
    reached = torch.cumsum(ratios, 0) >= share - 1e-12
    return int(torch.nonzero(reached)[0].item()) + 1


def draw(params: PcaVarianceParams, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The points (samples × dimensions, fp64, on ``device``) and Σ's eigenvector basis Q."""
    generator = seeded(device, params.seed)
    d = params.dimensions
    basis, _ = torch.linalg.qr(
        torch.randn(d, d, generator=generator, dtype=torch.float64, device=device)
    )
    z = torch.randn(params.samples, d, generator=generator, dtype=torch.float64, device=device)
    scales = spectrum(params).sqrt().to(device)
    return (z * scales) @ basis.T + params.offset, basis


def compute(params: PcaVarianceParams, device: torch.device) -> Outcome:
    """Ratios from torch's SVD and sklearn's PCA on the same points, beside the true spectrum."""
    points, basis = draw(params, device)
    n, k = params.samples, params.components
    singular = torch.linalg.svdvals(points - points.mean(dim=0)).cpu()
    eigenvalues = singular.square() / (n - 1)
    ratios = eigenvalues / eigenvalues.sum()
    true = spectrum(params)
    true_ratios = true / true.sum()
    data = points.cpu().numpy()
    with threadpool_limits(limits=1):
        pca = PCA(svd_solver="covariance_eigh").fit(data)
        scores = pca.transform(data)[:, :k]
    rebuilt = scores @ pca.components_[:k] + pca.mean_
    sklearn_ratios = torch.from_numpy(pca.explained_variance_ratio_)
    gap = float((sklearn_ratios - ratios[: len(sklearn_ratios)]).abs().max())
    outputs = {
        "first_ratio": float(ratios[0]),
        "cumulative_ratio": float(ratios[:k].sum()),
        "components_90": float(components_for(ratios, 0.9)),
        "components_95": float(components_for(ratios, 0.95)),
        "reconstruction_error": float(((data - rebuilt) ** 2).sum() / (n - 1)),
        "top_eigenvalue": float(eigenvalues[0]),
        "total_variance": float(eigenvalues.sum()),
        "sklearn_gap": gap,
        "uncentered_first_ratio": _uncentered_first_ratio(points),
    }
    theory = {
        "first_ratio": float(true_ratios[0]),
        "cumulative_ratio": float(true_ratios[:k].sum()),
        "components_90": float(components_for(true_ratios, 0.9)),
        "components_95": float(components_for(true_ratios, 0.95)),
        "reconstruction_error": float(true[k:].sum()),
        "top_eigenvalue": float(true[0]),
        "total_variance": float(true.sum()),
        "sklearn_gap": 0.0,
        "uncentered_first_ratio": _population_uncentered_ratio(params, basis.cpu()),
    }
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_spectrum_series(ratios, sklearn_ratios, true_ratios),
        notes=[
            "Sample eigenvalues spread around the true ones: the largest come out too large "
            "and the smallest too small, the more so as dimensions / points grows.",
            "reconstruction_error is divided by n − 1, so it equals the sum of the dropped "
            "eigenvalues of the sample covariance exactly.",
        ],
    )


def _uncentered_first_ratio(points: torch.Tensor) -> float:
    """Top eigenvalue over the trace of XᵀX: what an SVD of the raw, uncentred data reports."""
    second_moment = torch.linalg.eigvalsh(points.T @ points)
    return float(second_moment[-1] / second_moment.sum())


def _population_uncentered_ratio(params: PcaVarianceParams, basis: torch.Tensor) -> float:
    """The same ratio for Σ + μμᵀ, the population second moment (μ = offset on every axis)."""
    mean = torch.full((params.dimensions, 1), params.offset, dtype=torch.float64)
    moment = (basis * spectrum(params)) @ basis.T + mean @ mean.T
    values = torch.linalg.eigvalsh(moment)
    return float(values[-1] / values.sum())


def _spectrum_series(
    ratios: torch.Tensor, sklearn_ratios: torch.Tensor, true_ratios: torch.Tensor
) -> list[Series]:
    """Scree (ratio per component) and cumulative share: torch, sklearn PCA and the truth."""
    x = [float(i) for i in range(1, len(true_ratios) + 1)]
    series = []
    for label, values in (
        ("torch SVD", ratios),
        ("sklearn PCA", sklearn_ratios),
        ("true spectrum", true_ratios),
    ):
        series.append(
            Series(
                name=label,
                kind="line",
                x=x[: len(values)],
                y=values.tolist(),
                x_label="component",
                y_label="explained variance ratio",
            )
        )
    for label, values in (("torch SVD", ratios), ("true spectrum", true_ratios)):
        series.append(
            Series(
                name=f"{label}, cumulative",
                kind="line",
                x=x[: len(values)],
                y=torch.cumsum(values, 0).tolist(),
                x_label="components kept",
                y_label="cumulative share of variance",
            )
        )
    return series


PCA_VARIANCE = Demo(spec=spec.PCA_VARIANCE, compute=compute)

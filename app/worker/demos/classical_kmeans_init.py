"""``kmeans_init``: k-means++ seeding against random initialisation, and choosing k.

scikit-learn's ``make_blobs`` draws the data; each run seeds ``KMeans`` with k
centres and lets Lloyd's iterations converge (``n_init=1``). k-means++
(Arthur & Vassilvitskii 2007) draws the first centre uniformly from the data
and each next one with probability proportional to D(x)², the squared
distance to the nearest centre chosen so far; scikit-learn's default is its
greedy variant (2 + ⌊ln k⌋ candidates per centre, the best kept). Random
initialisation takes k distinct rows. Seeding inertia and final inertia are
divided by the best inertia any run found, so a ratio of 1 is the best
clustering seen; the seeds alone are bounded in expectation by
8(ln k + 2) × the optimum.

Run i seeds with ``random_state=i``: the seeds are drawn exactly as ``KMeans``
draws them (``kmeans_plusplus``, or ``RandomState.choice`` with the uniform
weights ``_init_centroids`` passes), then handed to ``KMeans`` as its ``init``,
so the seeding inertia is measured on the very centres the run starts from.
Every scikit-learn call runs on one OpenMP thread, as the worker runs torch.
"""

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from sklearn.cluster import KMeans, kmeans_plusplus  # type: ignore[import-untyped]
from sklearn.datasets import make_blobs  # type: ignore[import-untyped]
from sklearn.metrics import pairwise_distances, silhouette_score  # type: ignore[import-untyped]
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from app.demos.specs import classical_kmeans_init as spec
from app.demos.specs.classical_kmeans_init import KMeansInitParams
from app.worker.demo import Demo, Outcome, Series

Init = Literal["kmeanspp", "random"]
INITS: tuple[Init, ...] = ("kmeanspp", "random")
LABELS = {"kmeanspp": "k-means++", "random": "random rows"}

EXTRA_K = 5
"""The choosing-k series runs from k = 1 to the number of blobs + EXTRA_K."""
SERIES_N_INIT = 3
"""Restarts (k-means++, random_state 0) behind each point of the inertia and silhouette series."""


def seeding_bound(k: int) -> float:
    """8(ln k + 2): the bound on E[seeding inertia] / optimal inertia for k-means++.

    Example:
        >>> round(seeding_bound(15), 1)
        37.7
    """
    return 8 * (math.log(k) + 2)


def blobs(params: KMeansInitParams) -> tuple[np.ndarray, np.ndarray]:
    """The points and the blob each came from (make_blobs, random_state = seed)."""
    points, labels = make_blobs(
        n_samples=params.samples,
        centers=params.clusters,
        n_features=params.features,
        cluster_std=params.cluster_std,
        center_box=(-params.center_box, params.center_box),
        random_state=params.seed,
    )
    return points, labels


def inertia(points: np.ndarray, centers: np.ndarray) -> float:
    """Sum over the points of the squared distance to the nearest centre, computed in torch."""
    x, c = torch.from_numpy(points), torch.from_numpy(centers)
    distances = torch.cdist(x, c, compute_mode="donot_use_mm_for_euclid_dist")
    return float(distances.square().amin(dim=1).sum())


def initial_centers(points: np.ndarray, k: int, init: Init, seed: int) -> np.ndarray:
    """The k centres ``KMeans(init=..., random_state=seed)`` would start from."""
    if init == "kmeanspp":
        centers, _ = kmeans_plusplus(points, k, random_state=seed)
        return np.asarray(centers)
    n = len(points)
    rows = np.random.RandomState(seed).choice(n, size=k, replace=False, p=np.full(n, 1.0 / n))
    return points[rows]


@dataclass(frozen=True)
class Runs:
    """One seeding's runs: inertia of the seeds, final inertia and Lloyd iterations, per run."""

    seeding: np.ndarray
    final: np.ndarray
    iterations: np.ndarray


def run_seeding(points: np.ndarray, k: int, init: Init, runs: int) -> Runs:
    """``runs`` fits of KMeans from this seeding, run i with random_state i."""
    seeding, final, iterations = [], [], []
    for seed in range(runs):
        centers = initial_centers(points, k, init, seed)
        fit = KMeans(n_clusters=k, init=centers, n_init=1).fit(points)
        seeding.append(inertia(points, centers))
        final.append(float(fit.inertia_))
        iterations.append(int(fit.n_iter_))
    return Runs(np.array(seeding), np.array(final), np.array(iterations))


def generating_inertia(points: np.ndarray, labels: np.ndarray) -> float:
    """Inertia of the generating partition: squared distances to each blob's own mean."""
    return sum(
        float(((points[labels == j] - points[labels == j].mean(axis=0)) ** 2).sum())
        for j in np.unique(labels)
    )


def choose_k(points: np.ndarray, clusters: int) -> tuple[list[int], list[float], list[float]]:
    """k from 1 to clusters + EXTRA_K: the best inertia of SERIES_N_INIT runs, and the silhouette.

    The silhouette needs at least two clusters: its list starts at k = 2. The
    distances between points are computed once and passed to every silhouette
    (``metric="precomputed"``, the same numbers in half the time).
    """
    ks = list(range(1, clusters + EXTRA_K + 1))
    distances = pairwise_distances(points)
    inertias, silhouettes = [], []
    for k in ks:
        fit = KMeans(n_clusters=k, n_init=SERIES_N_INIT, random_state=0).fit(points)
        inertias.append(float(fit.inertia_))
        if k >= 2:
            silhouettes.append(
                float(silhouette_score(distances, fit.labels_, metric="precomputed"))
            )
    return ks, inertias, silhouettes


def compute(params: KMeansInitParams, device: torch.device) -> Outcome:
    """Fit both seedings ``runs`` times each, then the inertia and silhouette against k.

    scikit-learn computes on the CPU (the spec says ``uses_device=False``), so
    ``device`` is always the CPU here.
    """
    points, labels = blobs(params)
    k = params.clusters
    with threadpool_limits(limits=1):
        runs = {init: run_seeding(points, k, init, params.runs) for init in INITS}
        ks, inertias, silhouettes = choose_k(points, k)
    best = min(float(r.final.min()) for r in runs.values())
    outputs: dict[str, float] = {}
    for init, r in runs.items():
        final = r.final / best
        outputs |= {
            f"seeding_ratio_{init}": float((r.seeding / best).mean()),
            f"worst_seeding_ratio_{init}": float((r.seeding / best).max()),
            f"mean_ratio_{init}": float(final.mean()),
            f"worst_ratio_{init}": float(final.max()),
            f"near_best_share_{init}": float((final <= params.near_best).mean()),
            f"stuck_share_{init}": float((final > params.near_best).mean()),
            f"mean_iterations_{init}": float(r.iterations.mean()),
            f"max_iterations_{init}": float(r.iterations.max()),
        }
    best_k = int(np.argmax(silhouettes)) + 2
    outputs |= {
        "seeding_bound": seeding_bound(k),
        "best_inertia": best,
        "generating_inertia": generating_inertia(points, labels),
        "silhouette_best_k": float(best_k),
        "silhouette_best": max(silhouettes),
        "silhouette_at_clusters": silhouettes[k - 2],
        "drop_to_clusters": inertias[k - 2] - inertias[k - 1],
        "drop_after_clusters": inertias[k - 1] - inertias[k],
    }
    return Outcome(
        outputs=outputs,
        # E Σ_j Σ_{x in blob j} |x − mean_j|² = (n_j − 1)·features·std² summed over blobs.
        theory={
            "generating_inertia": (params.samples - k) * params.features * params.cluster_std**2
        },
        series=[*_run_series(runs, best), *_k_series(ks, inertias, silhouettes)],
        notes=[
            "Ratios are to the best inertia any run found, not to a proven optimum: the "
            "seeding bound 8(ln k + 2) is on the expectation over the optimum.",
            "k-means++ here is scikit-learn's greedy variant (2 + ⌊ln k⌋ candidates per "
            "centre); KMeans' default n_init='auto' runs it once.",
            f"The k series keeps the best of {SERIES_N_INIT} k-means++ runs for each k.",
        ],
    )


def _run_series(runs: dict[Init, Runs], best: float) -> list[Series]:
    """Final and seeding inertia over the best, each seeding's runs sorted from best to worst."""
    series = []
    for what, field in (("final", "final"), ("seeding", "seeding")):
        for init, r in runs.items():
            ratios = np.sort(getattr(r, field) / best)
            series.append(
                Series(
                    name=f"{LABELS[init]}, {what}",
                    kind="line",
                    x=[float(i) for i in range(1, len(ratios) + 1)],
                    y=ratios.tolist(),
                    x_label="run, sorted",
                    y_label=f"{what} inertia / best",
                )
            )
    return series


def _k_series(ks: list[int], inertias: list[float], silhouettes: list[float]) -> list[Series]:
    return [
        Series(
            name="best inertia",
            kind="line",
            x=[float(k) for k in ks],
            y=inertias,
            x_label="k",
            y_label="inertia",
        ),
        Series(
            name="mean silhouette",
            kind="line",
            x=[float(k) for k in ks[1:]],
            y=silhouettes,
            x_label="k",
            y_label="silhouette",
        ),
    ]


# --- the demo -----------------------------------------------------------------------------------

KMEANS_INIT = Demo(spec=spec.KMEANS_INIT, compute=compute)

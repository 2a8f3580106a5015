"""kmeans_init: scikit-learn's inertia against a hand computation, the seeds KMeans draws, the card's figures.

The card's figures (content/classical/kmeans-plus-plus.md) come from the same
data (make_blobs, random_state 0 or 7 or 1) and the same run seeds, so they are
checked to their printed digits.
"""

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.classical_kmeans_init import (
    blobs,
    generating_inertia,
    inertia,
    initial_centers,
    seeding_bound,
)
from tests.worker.conftest import RunDemo

SMALL = {"samples": 300, "clusters": 5, "cluster_std": 0.6, "center_box": 8.0, "runs": 12}
FOUR_BLOBS = {"samples": 600, "clusters": 4, "cluster_std": 1.0, "center_box": 10.0}


def hand_inertia(points: np.ndarray, centers: np.ndarray, labels: np.ndarray) -> float:
    """Sum of squared distances from each point to the centre it is assigned to."""
    return float(((points - centers[labels]) ** 2).sum())


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_sklearn_inertia_is_the_squared_distance_to_the_assigned_centres(init: str) -> None:
    points, _ = blobs(get_demo("kmeans_init").validate(SMALL))
    with threadpool_limits(limits=1):
        for seed in range(5):
            fit = KMeans(n_clusters=5, init=init, n_init=1, random_state=seed).fit(points)
            centers = fit.cluster_centers_
            assert fit.inertia_ == pytest.approx(hand_inertia(points, centers, fit.labels_))
            # Each point is assigned to its nearest centre, so the inertia is also the
            # seeding-style cost of those centres, which the demo computes in torch.
            nearest = ((points[:, None] - centers[None]) ** 2).sum(-1).argmin(1)
            assert (nearest == fit.labels_).all()
            assert inertia(points, centers) == pytest.approx(fit.inertia_, rel=1e-10)


@pytest.mark.parametrize(("init", "demo_init"), [("k-means++", "kmeanspp"), ("random", "random")])
def test_the_demo_starts_from_the_centres_kmeans_draws_itself(init: str, demo_init: str) -> None:
    points, _ = blobs(get_demo("kmeans_init").validate(SMALL))
    with threadpool_limits(limits=1):
        for seed in range(12):
            own = KMeans(n_clusters=5, init=init, n_init=1, random_state=seed).fit(points)
            centers = initial_centers(points, 5, demo_init, seed)  # type: ignore[arg-type]
            given = KMeans(n_clusters=5, init=centers, n_init=1).fit(points)
            assert given.inertia_ == pytest.approx(own.inertia_, rel=1e-9)
            assert given.n_iter_ == own.n_iter_


def test_ratios_match_kmeans_run_with_its_own_seeding(run: RunDemo) -> None:
    outputs = run("kmeans_init", **SMALL).outputs
    points, _ = blobs(get_demo("kmeans_init").validate(SMALL))
    finals = {}
    with threadpool_limits(limits=1):
        for init in ("k-means++", "random"):
            fits = [
                KMeans(n_clusters=5, init=init, n_init=1, random_state=seed).fit(points)
                for seed in range(12)
            ]
            finals[init] = (
                np.array([f.inertia_ for f in fits]),
                np.array([f.n_iter_ for f in fits]),
            )
    best = min(final.min() for final, _ in finals.values())
    assert outputs["best_inertia"] == pytest.approx(best, rel=1e-9)
    for init, name in (("k-means++", "kmeanspp"), ("random", "random")):
        final, iterations = finals[init]
        assert outputs[f"mean_ratio_{name}"] == pytest.approx((final / best).mean(), rel=1e-9)
        assert outputs[f"near_best_share_{name}"] == np.mean(final / best <= 1.01)
        assert outputs[f"stuck_share_{name}"] == pytest.approx(1 - np.mean(final / best <= 1.01))
        assert outputs[f"mean_iterations_{name}"] == iterations.mean()


def test_generating_inertia_closed_form() -> None:
    # E Σ |x − blob mean|² = (n − k)·features·std²; its sd is std²·sqrt(2(n − k)·features).
    params = get_demo("kmeans_init").validate({**SMALL, "features": 3})
    expected, sd = 295 * 3 * 0.36, 0.36 * np.sqrt(2 * 295 * 3)
    for seed in range(5):
        points, labels = blobs(params.model_copy(update={"seed": seed}))
        assert generating_inertia(points, labels) == pytest.approx(expected, abs=4 * sd)


def test_seeding_bound() -> None:
    assert seeding_bound(15) == pytest.approx(8 * (np.log(15) + 2))
    assert round(seeding_bound(15), 1) == 37.7


# The card's first experiment: 15 blobs, std 0.5, box ±20, 1500 points, 100 runs each.
CARD = {
    "near_best_share_kmeanspp": (0.99, 0.0),
    "near_best_share_random": (0.03, 0.0),
    "mean_ratio_kmeanspp": (1.014, 0.0005),
    "mean_ratio_random": (11.108, 0.0005),
    "worst_ratio_kmeanspp": (2.42, 0.005),
    "worst_ratio_random": (22.45, 0.005),
    "mean_iterations_kmeanspp": (2.03, 0.0),
    "mean_iterations_random": (5.84, 0.0),
    "max_iterations_kmeanspp": (5, 0.0),
    "max_iterations_random": (15, 0.0),
    "seeding_ratio_kmeanspp": (1.90, 0.005),
    "worst_seeding_ratio_kmeanspp": (3.69, 0.005),
    "seeding_ratio_random": (67.1, 0.05),
    "worst_seeding_ratio_random": (176.4, 0.05),
    "silhouette_best_k": (15, 0.0),
}


def test_the_cards_fifteen_blobs(run: RunDemo) -> None:
    result = run("kmeans_init")
    for name, (expected, tolerance) in CARD.items():
        assert result.outputs[name] == pytest.approx(expected, abs=tolerance + 1e-12), name
    # The best run found the generating partition, whose inertia sits near its expectation.
    assert result.outputs["best_inertia"] == pytest.approx(
        result.outputs["generating_inertia"], rel=1e-4
    )
    assert result.theory["generating_inertia"] == (1500 - 15) * 2 * 0.25
    assert result.outputs["seeding_ratio_kmeanspp"] < result.outputs["seeding_bound"]


@pytest.mark.parametrize(
    ("seed", "best_k", "best", "at_four", "drop_to", "drop_after"),
    [(7, 4, 0.811, 0.811, 4114, 107), (1, 2, 0.704, 0.638, 1097, 133)],
)
def test_the_cards_four_blobs_elbow_and_silhouette(
    run: RunDemo,
    seed: int,
    best_k: int,
    best: float,
    at_four: float,
    drop_to: float,
    drop_after: float,
) -> None:
    outputs = run("kmeans_init", **FOUR_BLOBS, seed=seed).outputs
    assert outputs["silhouette_best_k"] == best_k
    assert outputs["silhouette_best"] == pytest.approx(best, abs=0.0005)
    assert outputs["silhouette_at_clusters"] == pytest.approx(at_four, abs=0.0005)
    assert outputs["drop_to_clusters"] == pytest.approx(drop_to, abs=0.5)
    assert outputs["drop_after_clusters"] == pytest.approx(drop_after, abs=0.5)


def test_silhouette_from_precomputed_distances_equals_the_plain_call(run: RunDemo) -> None:
    result = run("kmeans_init", **FOUR_BLOBS, seed=1)
    points, _ = blobs(get_demo("kmeans_init").validate({**FOUR_BLOBS, "seed": 1}))
    with threadpool_limits(limits=1):
        labels = KMeans(n_clusters=4, n_init=3, random_state=0).fit(points).labels_
    plain = silhouette_score(points, labels)
    assert result.outputs["silhouette_at_clusters"] == pytest.approx(plain, rel=1e-12)
    [silhouettes] = [s for s in result.series if s.name == "mean silhouette"]
    assert silhouettes.x[0] == 2 and max(silhouettes.y) == result.outputs["silhouette_best"]


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("kmeans_init").validate({"runs": 101})
    assert caught.value.problems[0].message == "runs must be an integer between 10 and 100, got 101"
    response = client.post("/demos/kmeans_init", json={"clusters": 16})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "clusters"

"""``kmeans_init``: k-means++ seeding against random initialisation, and choosing k.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/classical_kmeans_init.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec


class KMeansInitParams(DemoParams):
    samples: int = Field(
        1500,
        ge=100,
        le=1500,
        title="Points",
        description="Points drawn by scikit-learn's make_blobs, split evenly among the blobs.",
    )
    clusters: int = Field(
        15,
        ge=2,
        le=15,
        title="Blobs (k)",
        description="Gaussian blobs drawn, and the k both seedings fit.",
    )
    features: int = Field(
        2, ge=2, le=10, title="Dimensions", description="Coordinates of each point."
    )
    cluster_std: float = Field(
        0.5,
        ge=0.1,
        le=5.0,
        title="Blob std",
        description="Standard deviation of each blob along every coordinate.",
    )
    center_box: float = Field(
        20.0,
        ge=1.0,
        le=100.0,
        title="Centre box",
        description="Blob centres are uniform in [−box, box] along every coordinate "
        "(make_blobs' default is 10).",
    )
    runs: int = Field(
        100,
        ge=10,
        le=100,
        title="Runs",
        description="KMeans runs with n_init=1 for each seeding; run i uses random_state i.",
    )
    near_best: float = Field(
        1.01,
        ge=1.001,
        le=2.0,
        title="Near-best factor",
        description="A run whose final inertia exceeds this × the best inertia found is "
        "stuck in a worse local optimum.",
    )
    seed: Seed = 0


def _per_seeding() -> dict[str, str]:
    """The same output for both seedings: ``NAME_kmeanspp`` and ``NAME_random``."""
    return {
        f"{name}_{init}": f"{text} ({label})."
        for name, text in (
            ("seeding_ratio", "Mean inertia of the initial centres alone / best inertia found"),
            ("worst_seeding_ratio", "Largest seeding inertia / best inertia found"),
            ("mean_ratio", "Mean final inertia after Lloyd's iterations / best inertia found"),
            ("worst_ratio", "Largest final inertia / best inertia found"),
            ("near_best_share", "Share of runs ending within near_best × the best inertia"),
            ("stuck_share", "Share of runs ending above near_best × the best inertia"),
            ("mean_iterations", "Mean number of Lloyd iterations, KMeans' n_iter_"),
            ("max_iterations", "Most Lloyd iterations in one run"),
        )
        for init, label in (("kmeanspp", "k-means++"), ("random", "random rows"))
    }


KMEANS_INIT = DemoSpec(
    name="kmeans_init",
    version=1,
    title="k-means++ seeding against random initialisation, and choosing k",
    description="scikit-learn's KMeans on Gaussian blobs, one run per seed, seeded by "
    "k-means++ or by random rows: how far each ends from the best inertia found, how often it "
    "is stuck, how many iterations it takes; then inertia and silhouette against k.",
    params=KMeansInitParams,
    outputs={
        **_per_seeding(),
        "seeding_bound": "8(ln k + 2): Arthur and Vassilvitskii's bound on the expected "
        "k-means++ seeding inertia over the optimum.",
        "best_inertia": "Lowest final inertia any run reached (the reference of every ratio).",
        "generating_inertia": "Inertia of the partition that generated the data, about its "
        "own blob means.",
        "silhouette_best_k": "The k from 2 to blobs + 5 with the highest mean silhouette "
        "(sklearn silhouette_score).",
        "silhouette_best": "That highest mean silhouette.",
        "silhouette_at_clusters": "Mean silhouette at k = the number of blobs.",
        "drop_to_clusters": "Inertia at k − 1 minus inertia at k, for k = the number of blobs.",
        "drop_after_clusters": "Inertia at k minus inertia at k + 1: small after the elbow.",
    },
    uses_device=False,
    # Overlapping blobs (std 5 in a box of ±1) take the most Lloyd iterations.
    worst_cases=(
        {
            "samples": 1500,
            "clusters": 15,
            "features": 10,
            "cluster_std": 5.0,
            "center_box": 1.0,
            "runs": 100,
        },
        {
            "samples": 1500,
            "clusters": 15,
            "features": 2,
            "cluster_std": 5.0,
            "center_box": 1.0,
            "runs": 100,
        },
    ),
)

"""ann_index: faiss indexes measured against NumPy brute force and the byte formulas.

Recall is recomputed from a plain NumPy nearest-neighbour search (float64),
the byte counts against n·d·4, n·m, n·8 and the HNSW link count, and the
search knobs against their known limits (nprobe = nlist is exhaustive). With
one faiss thread everything but the timings is deterministic for a seed.
"""

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.ann_index import build, mixture, recall_at_k
from tests.worker.conftest import RunDemo

SMALL = {"vectors": 2_000, "dim": 32, "queries": 50}
PQ = {"vectors": 10_000, "dim": 64, "queries": 50}


def brute_force(base: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The k nearest rows of ``base`` for each query by squared L2 distance, in float64."""
    b, q = base.astype(np.float64), queries.astype(np.float64)
    distances = (q**2).sum(1)[:, None] - 2 * q @ b.T + (b**2).sum(1)[None, :]
    return np.argsort(distances, axis=1, kind="stable")[:, :k]


def test_recall_at_k_counts_shared_ids() -> None:
    exact = np.array([[0, 1, 2, 3], [4, 5, 6, 7]])
    found = np.array([[3, 2, 9, -1], [4, 5, 6, 7]])
    assert recall_at_k(found, exact) == pytest.approx((2 / 4 + 4 / 4) / 2, abs=1e-15)


def test_mixture_is_seeded_float32_with_the_stated_spread() -> None:
    first = mixture(4_000, 16, clusters=1, spread=0.5, rng=np.random.default_rng(3))
    again = mixture(4_000, 16, clusters=1, spread=0.5, rng=np.random.default_rng(3))
    assert first.dtype == np.float32 and first.shape == (4_000, 16)
    assert np.array_equal(first, again)
    # One cluster: every point is the same centre plus N(0, 0.25) noise.
    assert first.var(axis=0).mean() == pytest.approx(0.25, rel=0.05)


@pytest.mark.parametrize(
    "params",
    [
        {"index": "hnsw", "hnsw_m": 4, "ef_search": 8},
        {"index": "ivf_flat", "nlist": 40, "nprobe": 2},
        {"index": "flat"},
    ],
)
def test_recall_equals_numpy_brute_force(run: RunDemo, params: dict[str, object]) -> None:
    demo = get_demo("ann_index")
    p = demo.validate({**SMALL, "seed": 7, **params})
    data = mixture(
        p.vectors + p.queries,
        p.dim,
        clusters=p.clusters,
        spread=p.spread,
        rng=np.random.default_rng(p.seed),
    )
    base, queries = data[: p.vectors], data[p.vectors :]
    exact = brute_force(base, queries, p.k)
    import faiss

    faiss.omp_set_num_threads(1)
    index = build(p)
    index.train(base)
    index.add(base)
    _, found = index.search(queries, p.k)
    by_hand = np.mean([len(set(f) & set(e)) / p.k for f, e in zip(found, exact, strict=True)])
    assert run("ann_index", **SMALL, seed=7, **params).outputs["recall"] == pytest.approx(
        by_hand, abs=1e-12
    )


def test_flat_is_exact_and_its_bytes_are_n_d_4(run: RunDemo) -> None:
    out = run("ann_index", index="flat", **SMALL).outputs
    n_d_4 = 2_000 * 32 * 4
    assert out["recall"] == 1.0
    assert out["code_bytes"] == out["flat_bytes"] == n_d_4
    assert 0 <= out["memory_bytes"] - n_d_4 <= 100  # a small serialization header
    assert out["distances_per_query"] == 2_000


def test_ivf_flat_adds_8_byte_ids_and_centroids(run: RunDemo) -> None:
    out = run("ann_index", index="ivf_flat", nlist=50, **SMALL).outputs
    n, d = 2_000, 32
    assert (out["code_bytes"], out["id_bytes"], out["centroid_bytes"]) == (
        n * d * 4,
        n * 8,
        50 * d * 4,
    )
    formula = n * (d * 4 + 8) + 50 * d * 4
    assert 0 <= out["memory_bytes"] - formula <= 50 * 16 + 200  # list sizes and headers


def test_ivf_flat_scanning_every_cell_is_exact(run: RunDemo) -> None:
    out = run("ann_index", index="ivf_flat", nlist=50, nprobe=50, spread=3.0, **SMALL).outputs
    assert out["recall"] == pytest.approx(1.0, abs=1e-12)
    assert out["distances_per_query"] == 2_000


@pytest.mark.parametrize(("index", "knob"), [("ivf_flat", "nprobe"), ("hnsw", "ef_search")])
def test_recall_and_work_grow_with_the_search_knob(run: RunDemo, index: str, knob: str) -> None:
    extra = {"nlist": 50} if index == "ivf_flat" else {"hnsw_m": 8}
    sweep = [
        run("ann_index", index=index, spread=2.0, **{knob: v}, **extra, **SMALL).outputs
        for v in (1, 4, 16, 50)
    ]
    recalls = [out["recall"] for out in sweep]
    work = [out["distances_per_query"] for out in sweep]
    assert recalls == sorted(recalls) and recalls[0] < recalls[-1]
    assert work == sorted(work) and work[0] < work[-1]


def test_pq_codes_are_m_bytes_and_recall_grows_with_m(run: RunDemo) -> None:
    sweep = {m: run("ann_index", index="pq", pq_m=m, **PQ).outputs for m in (1, 2, 4)}
    for m, out in sweep.items():
        assert out["code_bytes"] == 10_000 * m
        assert out["centroid_bytes"] == 256 * 64 * 4  # m codebooks of 256 × d/m floats
        assert 0 <= out["memory_bytes"] - 10_000 * m - 256 * 64 * 4 <= 200
    assert sweep[1]["recall"] < sweep[2]["recall"] < sweep[4]["recall"]


def test_ivf_pq_stores_m_byte_codes_and_8_byte_ids(run: RunDemo) -> None:
    out = run("ann_index", index="ivf_pq", pq_m=4, nlist=64, **PQ).outputs
    assert (out["code_bytes"], out["id_bytes"]) == (10_000 * 4, 10_000 * 8)
    assert out["centroid_bytes"] == 64 * 64 * 4 + 256 * 64 * 4


def test_hnsw_graph_matches_the_expected_link_count(run: RunDemo) -> None:
    result = run("ann_index", index="hnsw", hnsw_m=8, **SMALL)
    out = result.outputs
    # 2M slots on layer 0, M per upper layer, P(layer ≥ l) = M^-l: n (2M + M/(M − 1)) links.
    assert out["graph_bytes"] == pytest.approx(2_000 * (16 + 8 / 7) * 4, rel=0.02)
    assert out["graph_bytes"] == pytest.approx(result.theory["graph_bytes"], rel=0.02)
    # faiss's wiki rounds it to (d·4 + M·2·4) per vector; faiss also keeps each node's level
    # (int32) and the offset of its links (int64): 12 more bytes, plus a small header.
    per_vector = 32 * 4 + out["graph_bytes"] / 2_000 + 4 + 8
    assert 0 <= out["bytes_per_vector"] - per_vector <= 0.5


def test_seeded_runs_repeat_exactly(run: RunDemo) -> None:
    first = run("ann_index", index="hnsw", hnsw_m=8, **SMALL).outputs
    again = run("ann_index", index="hnsw", hnsw_m=8, **SMALL).outputs
    for name in ("recall", "memory_bytes", "graph_bytes", "distances_per_query"):
        assert first[name] == again[name], name


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"index": "ivf_flat", "nlist": 10, "nprobe": 20},
            "nprobe must be at most nlist = 10: there are no more cells to scan, got 20: lower "
            "nprobe to 10",
        ),
        (
            {"index": "ivf_flat", "vectors": 5_000, "nlist": 200},
            "nlist must be at most vectors / 39 = 128 so that k-means has the 39 training points "
            "per centroid faiss asks for, got nlist 200 with 5000 vectors: lower nlist to 128 or "
            "raise vectors to 7800",
        ),
        (
            {"index": "pq", "dim": 48, "pq_m": 4},
            "pq_m must divide dim = 48 into sub-vectors of at least 16 dimensions, got 4: use one "
            "of 1, 2, 3",
        ),
        (
            {"index": "pq", "vectors": 5_000},
            "pq needs at least 39 × 256 = 9,984 vectors to train 8-bit sub-quantizers, got 5000: "
            "raise vectors to 9,984 or more",
        ),
        (
            {"index": "hnsw", "hnsw_m": 32},
            "vectors × hnsw_m must be at most 160,000 to keep the graph build under a second, got "
            "10000 × 32: lower hnsw_m to 16 or vectors to 5000",
        ),
        ({"dim": 128}, "dim must be an integer between 16 and 64, got 128"),
    ],
)
def test_bad_parameters_are_refused(raw: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("ann_index").validate(raw)
    assert [p.message for p in caught.value.problems] == [message]


def test_other_indexes_ignore_parameters_they_do_not_use() -> None:
    # nprobe > nlist and an odd pq_m only matter to the indexes that have cells or codes.
    get_demo("ann_index").validate({"index": "hnsw", "nlist": 10, "nprobe": 20, "dim": 48})


def test_bad_parameters_get_a_422(client: TestClient) -> None:
    response = client.post("/demos/ann_index", json={"index": "ivf_flat", "nlist": 8, "nprobe": 9})
    assert response.status_code == 422
    assert [p["param"] for p in response.json()["detail"]] == ["nprobe"]

"""``ann_index``: one approximate-nearest-neighbour index built with faiss, and measured.

The data: ``vectors`` database vectors and ``queries`` held-out query vectors
drawn from one seeded Gaussian mixture, ``clusters`` centres ~ N(0, I_d) and
N(0, spread² I_d) around each, as float32. Real embeddings cluster by topic;
a mixture is the simplest stand-in whose difficulty one knob (``spread``)
sets: small spreads give well-separated clusters (easy for IVF), large ones a
single isotropic blob (hard for every index).

The index, from faiss (Johnson, Douze & Jégou; L2 distance throughout):

- ``flat``: ``IndexFlatL2``, exact brute force over the raw vectors.
- ``ivf_flat``: ``IndexIVFFlat``, k-means into ``nlist`` cells (an inverted
  file); a query scans the ``nprobe`` cells with the nearest centroids.
- ``pq``: ``IndexPQ``, product quantisation (Jégou, Douze & Schmid, TPAMI
  2011): each vector cut into ``pq_m`` sub-vectors, each replaced by the id of
  the nearest of 256 k-means centroids (one byte); every code is scanned with
  asymmetric distances (query kept exact).
- ``ivf_pq``: ``IndexIVFPQ``, the two combined: PQ codes of the residuals to
  the cell centroid, ``nprobe`` cells scanned (the paper's IVFADC).
- ``hnsw``: ``IndexHNSWFlat`` (Malkov & Yashunin), a layered proximity graph
  over the raw vectors, ``hnsw_m`` links per node (2M on layer 0),
  efConstruction left at faiss's 40, searched with ``ef_search``.

faiss runs on one OpenMP thread: the worker runs one torch thread, the
machine is shared, and with one thread k-means and the HNSW build are
deterministic, so recall and sizes are reproducible for a seed. Ground truth
is ``IndexFlatL2`` on the same vectors; the tests check it against NumPy.
"""

import threading
import time
from typing import Any

import faiss as faiss_stubbed
import numpy as np
import torch

from app.demos.specs import ann_index as spec
from app.demos.specs.ann_index import AnnIndexParams
from app.worker.demo import Demo, Outcome, Series

faiss: Any = faiss_stubbed
"""faiss, untyped: its SWIG stubs lack attributes it has at run time (``cvar``'s search
counters, ``IndexFlatCodes.codes``, ``HNSW.neighbors``) and type every index as its base."""

ID_BYTES = 8
"""faiss inverted lists store each vector's id as a 64-bit integer (``idx_t``)."""

LINK_BYTES = 4
"""An HNSW neighbour is a 32-bit ``storage_idx_t``."""

_STATS = threading.Lock()
"""faiss counts distances in process-wide counters (``cvar.indexIVF_stats``,
``cvar.hnsw_stats``): a worker running demos in parallel (``max_concurrent`` > 1)
must not let two searches reset and read them at once."""


def mixture(
    n: int, d: int, *, clusters: int, spread: float, rng: np.random.Generator
) -> np.ndarray:
    """n float32 vectors: a random centre ~ N(0, I) each, plus N(0, spread² I) noise."""
    centres = rng.standard_normal((clusters, d))
    labels = rng.integers(0, clusters, size=n)
    points = centres[labels] + spread * rng.standard_normal((n, d))
    return points.astype(np.float32)


def build(params: AnnIndexParams) -> Any:
    """The untrained, empty index the parameters describe."""
    d = params.dim
    if params.index == "flat":
        return faiss.IndexFlatL2(d)
    if params.index == "ivf_flat":
        index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, params.nlist)
    elif params.index == "ivf_pq":
        index = faiss.IndexIVFPQ(faiss.IndexFlatL2(d), d, params.nlist, params.pq_m, 8)
    elif params.index == "pq":
        return faiss.IndexPQ(d, params.pq_m, 8)
    else:
        hnsw = faiss.IndexHNSWFlat(d, params.hnsw_m)
        hnsw.hnsw.efSearch = params.ef_search
        return hnsw
    index.nprobe = params.nprobe
    return index


def recall_at_k(found: np.ndarray, exact: np.ndarray) -> float:
    """Mean over queries of |found ∩ exact| / k (ids; -1 marks a missing result).

    Example:
        >>> recall_at_k(np.array([[1, 2, -1]]), np.array([[2, 3, 1]]))
        0.6666666666666666
    """
    k = exact.shape[1]
    hits = [len(set(f.tolist()) & set(e.tolist())) for f, e in zip(found, exact, strict=True)]
    return float(np.mean(hits) / k)


def parts(index: Any, params: AnnIndexParams) -> dict[str, float]:
    """Bytes of codes, ids, graph links and centroids, read from the index's own structures."""
    d = params.dim
    code = ids = graph = centroids = 0
    if isinstance(index, faiss.IndexIVF):
        sizes = [index.invlists.list_size(i) for i in range(index.nlist)]
        code = sum(sizes) * index.code_size
        ids = sum(sizes) * ID_BYTES
        centroids = index.quantizer.ntotal * d * 4
        if isinstance(index, faiss.IndexIVFPQ):
            centroids += faiss.vector_to_array(index.pq.centroids).nbytes
    elif isinstance(index, faiss.IndexHNSW):
        code = faiss.vector_to_array(faiss.downcast_index(index.storage).codes).nbytes
        graph = faiss.vector_to_array(index.hnsw.neighbors).size * LINK_BYTES
    else:
        code = faiss.vector_to_array(index.codes).nbytes
        if isinstance(index, faiss.IndexPQ):
            centroids = faiss.vector_to_array(index.pq.centroids).nbytes
    return {
        "code_bytes": float(code),
        "id_bytes": float(ids),
        "graph_bytes": float(graph),
        "centroid_bytes": float(centroids),
    }


def theory(params: AnnIndexParams) -> dict[str, float]:
    """The byte counts the formulas give (HNSW's graph: its expected size)."""
    n, d, kind = params.vectors, params.dim, params.index
    code = n * params.pq_m if "pq" in kind else n * d * 4
    coarse = params.nlist * d * 4 if "ivf" in kind else 0
    codebooks = 256 * d * 4 if "pq" in kind else 0  # m codebooks of 256 × d/m floats
    out = {
        "code_bytes": float(code),
        "id_bytes": float(n * ID_BYTES if "ivf" in kind else 0),
        "centroid_bytes": float(coarse + codebooks),
        "flat_bytes": float(n * d * 4),
    }
    if kind == "hnsw":
        # Layer 0 has 2M slots; a node reaches layer l ≥ 1 with probability M^-l (faiss's
        # level multiplier 1/ln M), each with M slots: expected M/(M − 1) more slots.
        m = params.hnsw_m
        out["graph_bytes"] = n * (2 * m + m / (m - 1)) * LINK_BYTES
    else:
        out["graph_bytes"] = 0.0
    if kind == "flat":
        out["recall"] = 1.0
    if kind in ("flat", "pq"):
        out["distances_per_query"] = float(n)
    return out


def _timed_search(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    _, ids = index.search(queries, k)
    return ids, (time.perf_counter() - start) * 1e3 / len(queries)


def compute(params: AnnIndexParams, device: torch.device) -> Outcome:
    """Draw the data, build the index, measure its bytes, recall@k and speed."""
    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(params.seed)
    data = mixture(
        params.vectors + params.queries,
        params.dim,
        clusters=params.clusters,
        spread=params.spread,
        rng=rng,
    )
    base, queries = data[: params.vectors], data[params.vectors :]

    exact_index = faiss.IndexFlatL2(params.dim)
    exact_index.add(base)
    exact, exact_ms = _timed_search(exact_index, queries, params.k)

    index = build(params)
    start = time.perf_counter()
    index.train(base)  # a no-op for flat and HNSW
    train_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    index.add(base)
    add_ms = (time.perf_counter() - start) * 1e3

    with _STATS:
        faiss.cvar.indexIVF_stats.reset()
        faiss.cvar.hnsw_stats.reset()
        found, query_ms = _timed_search(index, queries, params.k)
        if isinstance(index, faiss.IndexIVF):
            distances = faiss.cvar.indexIVF_stats.ndis / params.queries
        elif isinstance(index, faiss.IndexHNSW):
            distances = faiss.cvar.hnsw_stats.ndis / params.queries
        else:
            distances = params.vectors

    memory = len(faiss.serialize_index(index))
    flat = params.vectors * params.dim * 4
    outputs = {
        "recall": recall_at_k(found, exact),
        "memory_bytes": float(memory),
        "bytes_per_vector": memory / params.vectors,
        **parts(index, params),
        "flat_bytes": float(flat),
        "compression": flat / memory,
        "distances_per_query": float(distances),
        "scanned_share": distances / params.vectors,
    }
    hits = [len(set(f.tolist()) & set(e.tolist())) for f, e in zip(found, exact, strict=True)]
    return Outcome(
        outputs=outputs,
        theory=theory(params),
        series=[
            Series(
                name=f"recall@{params.k} per query",
                kind="histogram",
                x=[i / params.k for i in range(params.k + 1)],
                y=[float(hits.count(i)) for i in range(params.k + 1)],
                x_label=f"recall@{params.k}",
                y_label="queries",
            )
        ],
        notes=[
            # Times vary from run to run, so they are notes, not outputs: outputs repeat
            # exactly for a seed and cards can bind them.
            f"Measured on this run (one thread): training {train_ms:.0f} ms, adding "
            f"{add_ms:.0f} ms, search {query_ms:.3f} ms per query against "
            f"{exact_ms:.3f} ms for exact search.",
            "Vectors come from a seeded Gaussian mixture, not a real embedding model: the "
            "trends carry over, the exact recalls do not.",
            "PQ uses 8-bit codes (256 centroids per sub-quantizer); HNSW keeps faiss's "
            "efConstruction of 40.",
        ],
    )


ANN_INDEX = Demo(spec=spec.ANN_INDEX, compute=compute)

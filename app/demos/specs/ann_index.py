"""``ann_index``: one faiss index (flat, IVF-Flat, PQ, IVF-PQ or HNSW) built and measured.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/ann_index.py``. No torch or faiss here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

IndexKind = Literal["flat", "ivf_flat", "pq", "ivf_pq", "hnsw"]

MAX_VECTORS = 10_000
"""Most database vectors: HNSW construction and PQ training grow with n (and d), and
10,000 of at most 64 dimensions keep the slowest build under a second of CPU."""

POINTS_PER_CENTROID = 39
"""faiss's k-means warns below 39 training points per centroid (``min_points_per_centroid``)."""

PQ_CENTROIDS = 256
"""8-bit codes: 2⁸ centroids per sub-quantizer, so PQ training needs 39 × 256 = 9,984 vectors."""

MIN_SUBVECTOR = 16
"""Shortest PQ sub-vector: faiss's k-means is several times slower below 16 dimensions
(measured), which would take PQ training past the budget."""

MAX_GRAPH_LINKS = 160_000
"""Most n × M for HNSW: construction cost grows with both (10,000 vectors at M = 16)."""


class AnnIndexParams(DemoParams):
    index: IndexKind = Field(
        "hnsw",
        title="Index",
        description="flat: exact brute force; ivf_flat: k-means cells, raw vectors; pq: product "
        "quantisation, scanned in full; ivf_pq: cells holding PQ codes of residuals; hnsw: "
        "navigable graph over raw vectors.",
    )
    vectors: int = Field(
        10_000,
        ge=1_000,
        le=MAX_VECTORS,
        title="Database vectors n",
        description="Vectors in the index, drawn from the Gaussian mixture.",
    )
    dim: int = Field(64, ge=16, le=64, title="Dimension d", description="Vector size.")
    clusters: int = Field(
        100,
        ge=1,
        le=500,
        title="Mixture components",
        description="Gaussian clusters the vectors come from (centres ~ N(0, I)).",
    )
    spread: float = Field(
        1.0,
        ge=0.1,
        le=4.0,
        title="Cluster spread",
        description="Standard deviation within a cluster, relative to that of the centres: "
        "small is well separated, large is one blob.",
    )
    queries: int = Field(
        200,
        ge=10,
        le=500,
        title="Queries",
        description="Held-out vectors from the same mixture, searched one batch on one thread.",
    )
    k: int = Field(10, ge=1, le=100, title="k", description="Neighbours returned: recall@k.")
    nlist: int = Field(
        100,
        ge=1,
        le=256,
        title="IVF cells nlist",
        description="k-means centroids of the coarse quantizer (ivf_flat, ivf_pq).",
    )
    nprobe: int = Field(
        8,
        ge=1,
        le=256,
        title="nprobe",
        description="Cells scanned per query (ivf_flat, ivf_pq); nprobe = nlist scans them all.",
    )
    pq_m: int = Field(
        4,
        ge=1,
        le=4,
        title="PQ sub-quantizers m",
        description="Sub-vectors per vector, each coded in 8 bits: m bytes per code (pq, ivf_pq).",
    )
    hnsw_m: int = Field(
        16,
        ge=2,
        le=32,
        title="HNSW M",
        description="Links per node on the upper layers, 2M on the bottom layer (hnsw).",
    )
    ef_search: int = Field(
        16,
        ge=1,
        le=256,
        title="efSearch",
        description="Breadth of the bottom-layer search: its candidate list holds max(efSearch, "
        "k), and efSearch also sets when it stops (hnsw).",
    )
    seed: Seed = 0

    @field_validator("nlist")
    @classmethod
    def _enough_points_per_cell(cls, nlist: int, info: ValidationInfo) -> int:
        n = info.data.get("vectors")
        if _uses(info, "ivf") and n is not None and n < POINTS_PER_CENTROID * nlist:
            raise PydanticCustomError(
                "training",
                "nlist must be at most vectors / 39 = {fit} so that k-means has the 39 training "
                "points per centroid faiss asks for, got nlist {nlist} with {n} vectors: lower "
                "nlist to {fit} or raise vectors to {need}",
                {
                    "fit": n // POINTS_PER_CENTROID,
                    "nlist": nlist,
                    "n": n,
                    "need": POINTS_PER_CENTROID * nlist,
                },
            )
        return nlist

    @field_validator("nprobe")
    @classmethod
    def _probe_within_cells(cls, nprobe: int, info: ValidationInfo) -> int:
        nlist = info.data.get("nlist")
        if _uses(info, "ivf") and nlist is not None and nprobe > nlist:
            raise PydanticCustomError(
                "nprobe",
                "nprobe must be at most nlist = {nlist}: there are no more cells to scan, got "
                "{nprobe}: lower nprobe to {nlist}",
                {"nlist": nlist, "nprobe": nprobe},
            )
        return nprobe

    @field_validator("pq_m")
    @classmethod
    def _subvectors_fit(cls, m: int, info: ValidationInfo) -> int:
        d, n = info.data.get("dim"), info.data.get("vectors")
        if not _uses(info, "pq") or d is None or n is None:
            return m
        if d % m != 0 or d // m < MIN_SUBVECTOR:
            fits = [f for f in range(1, d // MIN_SUBVECTOR + 1) if d % f == 0]
            raise PydanticCustomError(
                "pq_m",
                "pq_m must divide dim = {d} into sub-vectors of at least 16 dimensions, got "
                "{m}: use one of {fits}",
                {"d": d, "m": m, "fits": ", ".join(map(str, fits))},
            )
        if n < POINTS_PER_CENTROID * PQ_CENTROIDS:
            raise PydanticCustomError(
                "training",
                "pq needs at least 39 × 256 = 9,984 vectors to train 8-bit sub-quantizers, got "
                "{n}: raise vectors to 9,984 or more",
                {"n": n},
            )
        return m

    @field_validator("hnsw_m")
    @classmethod
    def _graph_within_budget(cls, m: int, info: ValidationInfo) -> int:
        n = info.data.get("vectors")
        if _uses(info, "hnsw") and n is not None and n * m > MAX_GRAPH_LINKS:
            raise PydanticCustomError(
                "budget",
                "vectors × hnsw_m must be at most 160,000 to keep the graph build under a "
                "second, got {n} × {m}: lower hnsw_m to {fit} or vectors to {fit_n}",
                {"n": n, "m": m, "fit": MAX_GRAPH_LINKS // n, "fit_n": MAX_GRAPH_LINKS // m},
            )
        return m


def _uses(info: ValidationInfo, family: str) -> bool:
    """Whether the chosen index has this part; other indexes ignore its parameters."""
    index = info.data.get("index")
    return index is not None and (index == family or family in index.split("_"))


ANN_INDEX = DemoSpec(
    name="ann_index",
    version=1,
    title="ANN indexes in faiss: memory, recall@k and query time",
    description="Vectors drawn from a seeded Gaussian mixture, indexed with one faiss index "
    "(flat, IVF-Flat, PQ, IVF-PQ or HNSW) on one thread; its serialized size and parts are "
    "measured, its top-k is scored against exact search, and its training, adding and "
    "search times go in the notes.",
    params=AnnIndexParams,
    outputs={
        "recall": "recall@k: share of the exact k nearest neighbours (IndexFlatL2) the index "
        "returns, mean over the queries.",
        "memory_bytes": "Length of faiss.serialize_index(index): everything the index writes "
        "out (IVF-PQ also rebuilds a search table in RAM that is not written).",
        "bytes_per_vector": "memory_bytes / n.",
        "code_bytes": "Bytes of the stored vector codes (raw float32 or PQ codes).",
        "id_bytes": "Bytes of the 64-bit ids the inverted lists keep (IVF only, else 0).",
        "graph_bytes": "Bytes of the HNSW neighbour lists, 4 per link slot (HNSW only, else 0).",
        "centroid_bytes": "Bytes of the trained centroids: coarse (IVF) and PQ codebooks.",
        "flat_bytes": "n · d · 4: the raw float32 vectors, for comparison.",
        "compression": "flat_bytes / memory_bytes.",
        "distances_per_query": "Distance computations per query (faiss's counters for IVF and "
        "HNSW; n for a full scan).",
        "scanned_share": "distances_per_query / n: the share of the database a query "
        "compares against (1 for a full scan).",
    },
    uses_device=False,
    # The slowest builds: HNSW at the most links, PQ training at the most sub-quantizers
    # and IVF-PQ with the most cells, each at the largest n and d.
    worst_cases=(
        {"index": "hnsw", "hnsw_m": 16, "ef_search": 256, "k": 100, "queries": 500},
        {"index": "pq", "pq_m": 4, "k": 100, "queries": 500},
        {"index": "ivf_pq", "pq_m": 4, "nlist": 256, "nprobe": 256, "queries": 500},
        {"index": "ivf_flat", "nlist": 256, "nprobe": 256, "queries": 500},
    ),
)

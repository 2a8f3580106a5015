"""``retrieval_hybrid``: BM25, a dense stand-in and their reciprocal rank fusion, scored.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/retrieval_hybrid.py`` and the labelled corpus in
``app/worker/demos/retrieval_corpus.py``. No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec

QuerySet = Literal["all", "keyword", "paraphrase"]
Method = Literal["lucene", "robertson", "atire", "bm25l", "bm25+"]

MAX_DIMS = 48
"""Most LSA dimensions: ARPACK needs fewer than the corpus's 63 passages, and
past about 30 the projection keeps nearly every word, so it is TF-IDF again."""

SYSTEMS = {"bm25": "BM25 (bm25s)", "dense": "the LSA stand-in", "rrf": "RRF of the two"}


class RetrievalHybridParams(DemoParams):
    queries: QuerySet = Field(
        "all",
        title="Queries",
        description="keyword: the passages' exact terms and identifiers; paraphrase: the same "
        "needs in other words; all: both sets.",
    )
    method: Method = Field(
        "lucene",
        title="BM25 variant",
        description="bm25s's method (Kamphuis et al. 2020's variants); lucene is bm25s's default.",
    )
    k1: float = Field(
        1.5,
        ge=0.0,
        le=3.0,
        title="k1",
        description="Term-frequency saturation: 0 counts presence only, larger values let "
        "repeats count longer (bm25s default 1.5).",
    )
    b: float = Field(
        0.75,
        ge=0.0,
        le=1.0,
        title="b",
        description="Length normalisation: 0 ignores passage length, 1 divides term "
        "frequency fully by length / average length.",
    )
    svd_dims: int = Field(
        16,
        ge=2,
        le=MAX_DIMS,
        title="LSA dimensions",
        description="Truncated-SVD components of the TF-IDF matrix: the dense stand-in's "
        "embedding size.",
    )
    rrf_k: int = Field(
        60,
        ge=0,
        le=1000,
        title="RRF k",
        description="Constant of reciprocal rank fusion, score = Σ 1/(k + rank); Cormack et "
        "al. used 60.",
    )
    cutoff: int = Field(
        5,
        ge=1,
        le=20,
        title="Cutoff k",
        description="Depth of recall@k, MRR@k and nDCG@k.",
    )
    mix_weight: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        title="Dense weight in a score mix",
        description="w in w·cosine + (1 − w)·BM25, the score mixing RRF avoids (raw and "
        "min–max normalised).",
    )


def _per_system() -> dict[str, str]:
    """``bm25_recall``, ``dense_mrr``, ``rrf_ndcg``, ...: each metric for each ranking."""
    return {
        f"{system}_{metric}": f"{label}: {text}; mean over the queries."
        for system, label in SYSTEMS.items()
        for metric, text in (
            ("recall", "recall@k, the share of a query's relevant passages in its top k"),
            ("mrr", "MRR@k, 1 / rank of the first relevant passage (0 if it is below k)"),
            ("ndcg", "nDCG@k with binary relevance"),
        )
    }


RETRIEVAL_HYBRID = DemoSpec(
    name="retrieval_hybrid",
    version=1,
    title="BM25, a dense stand-in and reciprocal rank fusion",
    description="A bundled corpus of 63 passages with keyword and paraphrase queries, ranked "
    "by BM25 (bm25s), by LSA (TF-IDF + truncated SVD, a stand-in for a neural embedder) and "
    "by reciprocal rank fusion of the two, each scored with recall@k, MRR@k and nDCG@k.",
    params=RetrievalHybridParams,
    outputs={
        **_per_system(),
        "mix_ndcg": "nDCG@k of the raw score mix w·cosine + (1 − w)·BM25.",
        "mix_minmax_ndcg": "nDCG@k of the same mix after min–max scaling each ranker's scores "
        "per query to [0, 1].",
        "mix_top1_is_bm25": "Share of queries whose raw mix puts BM25's top passage first.",
        "bm25_top_score": "Mean over the queries of the highest BM25 score.",
        "dense_top_score": "Mean over the queries of the highest cosine similarity.",
        "rrf_top_score": "Mean over the queries of the highest RRF score (at most 2/(k + 1)).",
        "queries": "Queries scored.",
        "passages": "Passages in the corpus.",
        "relevant_per_query": "Mean number of relevant passages per query.",
    },
    uses_device=False,
    # Cost barely moves with any parameter (63 passages, 24 queries); the most SVD
    # components and the deepest cutoff on every query are the most work.
    worst_cases=({"queries": "all", "svd_dims": MAX_DIMS, "cutoff": 20, "method": "bm25+"},),
)

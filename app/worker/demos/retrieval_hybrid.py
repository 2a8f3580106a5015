"""``retrieval_hybrid``: BM25, a dense stand-in and their reciprocal rank fusion, scored.

Three rankings of the bundled corpus (``retrieval_corpus.py``) for each query:

- **BM25** from bm25s (Lù 2024), whose default ``lucene`` method scores a
  passage d for query terms t as Σ_t IDF(t) · tf / (tf + k1·(1 − b + b·|d|/avgdl))
  with IDF(t) = ln(1 + (N − df + 0.5)/(df + 0.5)) (Kamphuis et al. 2020's
  Lucene variant: no (k1 + 1) factor, which scales every score of a query alike);
  ``robertson``, ``atire``, ``bm25l`` and ``bm25+`` are its other variants.
  Text is split by bm25s's tokenizer: lower case, words of two or more
  characters, English stop words removed, no stemming.
- **Dense**: LSA, i.e. scikit-learn's TF-IDF (sublinear tf) of the same tokens,
  projected onto ``svd_dims`` truncated-SVD components, L2-normalised, ranked
  by cosine. It stands in for a neural embedder without downloading one: like an
  embedder it maps words that occur in the same contexts close together, so it
  can match a query to a passage that shares none of its words, and its few
  dimensions blur rare identifiers. It is fitted on this corpus; a neural
  embedder is trained on far more text, so only the direction of its
  differences from BM25 carries over, not their size.
- **RRF** (Cormack, Clarke & Büttcher 2009): score(d) = Σ_r 1/(k + r(d)) over
  the two rankings, r the 1-based rank of d in each full ranking.

Ties (BM25 gives 0 to every passage without a query word) are broken by
passage position, for every ranking alike. Each ranking is scored against the
binary labels with recall@k, MRR@k and nDCG@k, computed from the ranks here;
``tests/worker/test_retrieval_hybrid.py`` checks them against scikit-learn's
``ndcg_score`` and hand-counted cases. The demo also mixes the raw scores,
w·cosine + (1 − w)·BM25, and min–max-scaled ones, to show what RRF avoids:
BM25 scores are unbounded sums of IDFs, cosines lie in [−1, 1].
"""

import bm25s  # type: ignore[import-untyped]
import numpy as np
import torch
from sklearn.decomposition import TruncatedSVD  # type: ignore[import-untyped]
from sklearn.feature_extraction.text import TfidfVectorizer  # type: ignore[import-untyped]
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from app.demos.specs import retrieval_hybrid as spec
from app.demos.specs.retrieval_hybrid import SYSTEMS, RetrievalHybridParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos.retrieval_corpus import PASSAGES, QUERY_SETS

# --- the three rankers --------------------------------------------------------------------------


def tokenize(texts: list[str]) -> list[list[str]]:
    """bm25s's tokenizer: lower case, words of 2+ characters, English stop words, no stemming.

    Example:
        >>> tokenize(["Error KX-7781 in release 5.12.3"])
        [['error', 'kx', '7781', 'release', '12']]
    """
    tokens: list[list[str]] = bm25s.tokenize(
        texts, stopwords="en", return_ids=False, show_progress=False
    )
    return tokens


def bm25_scores(
    passages: list[str], queries: list[str], *, method: str, k1: float, b: float
) -> np.ndarray:
    """BM25 score of every passage for every query (queries × passages), by bm25s in fp64."""
    retriever = bm25s.BM25(k1=k1, b=b, method=method, dtype="float64")
    retriever.index(tokenize(passages), show_progress=False)
    # A query word the corpus lacks scores nothing; bm25s drops it, as an index would.
    return np.stack([retriever.get_scores(tokens) for tokens in tokenize(queries)])


def dense_scores(passages: list[str], queries: list[str], *, dims: int) -> np.ndarray:
    """Cosine similarity in LSA space (queries × passages): TF-IDF, truncated SVD, L2 norm."""
    # bm25s's English list is Elastic's; scikit-learn's is longer. Feeding the bm25s tokens
    # keeps the two rankers on exactly the same words.
    vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens, sublinear_tf=True)
    matrix = vectorizer.fit_transform(tokenize(passages))
    with threadpool_limits(limits=1):  # one thread, as the worker runs torch
        svd = TruncatedSVD(n_components=dims, algorithm="arpack", random_state=0)
        passage_vectors = _unit_rows(svd.fit_transform(matrix))
        query_vectors = _unit_rows(svd.transform(vectorizer.transform(tokenize(queries))))
    return np.asarray(query_vectors @ passage_vectors.T)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every passage in each row, highest score first, ties by position.

    Example:
        >>> ranks(np.array([[0.5, 2.0, 0.5]])).tolist()
        [[2, 1, 3]]
    """
    order = np.argsort(-scores, axis=1, kind="stable")
    result = np.empty_like(order)
    np.put_along_axis(result, order, np.arange(1, scores.shape[1] + 1), axis=1)
    return result


def reciprocal_rank_fusion(rankings: list[np.ndarray], k: int) -> np.ndarray:
    """Σ over rankings of 1/(k + rank): Cormack, Clarke & Büttcher's RRF score.

    Example:
        >>> reciprocal_rank_fusion([np.array([[1, 2]]), np.array([[2, 1]])], k=0).tolist()
        [[1.5, 1.5]]
    """
    return np.asarray(np.sum([1.0 / (k + r) for r in rankings], axis=0))


def min_max(scores: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1]; a constant row becomes 0."""
    low = scores.min(axis=1, keepdims=True)
    span = scores.max(axis=1, keepdims=True) - low
    return np.asarray((scores - low) / np.where(span > 0, span, 1.0))


# --- metrics ------------------------------------------------------------------------------------


def recall_at_k(rank: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """Per query: relevant passages ranked within k / relevant passages."""
    found = ((rank <= k) & relevant).sum(axis=1)
    return np.asarray(found / relevant.sum(axis=1))


def mrr_at_k(rank: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """Per query: 1 / rank of the best-ranked relevant passage, 0 when it is below k.

    Example:
        >>> mrr_at_k(np.array([[3, 1, 2]]), np.array([[True, False, True]]), k=5).tolist()
        [0.5]
    """
    first = np.where(relevant, rank, np.iinfo(rank.dtype).max).min(axis=1)
    return np.where(first <= k, 1.0 / first, 0.0)


def ndcg_at_k(rank: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """Per query: Σ 1/log₂(rank + 1) over relevant passages within k, over its ideal value."""
    gains = np.where(relevant & (rank <= k), 1.0 / np.log2(rank + 1.0), 0.0).sum(axis=1)
    ideal_hits = np.minimum(relevant.sum(axis=1), k)
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = np.cumsum(discounts)[ideal_hits - 1]
    return np.asarray(gains / ideal)


# --- the demo -----------------------------------------------------------------------------------


def compute(params: RetrievalHybridParams, device: torch.device) -> Outcome:
    """Rank the corpus three ways for each query in the chosen set and score each ranking."""
    ids, passages = list(PASSAGES), list(PASSAGES.values())
    labelled = QUERY_SETS[params.queries]
    queries = list(labelled)
    relevant = np.array([[pid in labelled[q] for pid in ids] for q in queries])

    lexical = bm25_scores(passages, queries, method=params.method, k1=params.k1, b=params.b)
    dense = dense_scores(passages, queries, dims=params.svd_dims)
    fused = reciprocal_rank_fusion([ranks(lexical), ranks(dense)], params.rrf_k)
    w = params.mix_weight
    mixed = w * dense + (1 - w) * lexical
    mixed_scaled = w * min_max(dense) + (1 - w) * min_max(lexical)

    k = params.cutoff
    outputs: dict[str, float] = {}
    per_query: dict[str, np.ndarray] = {}
    for system, scores in (("bm25", lexical), ("dense", dense), ("rrf", fused)):
        rank = ranks(scores)
        per_query[system] = ndcg_at_k(rank, relevant, k)
        outputs[f"{system}_recall"] = float(recall_at_k(rank, relevant, k).mean())
        outputs[f"{system}_mrr"] = float(mrr_at_k(rank, relevant, k).mean())
        outputs[f"{system}_ndcg"] = float(per_query[system].mean())
    outputs["mix_ndcg"] = float(ndcg_at_k(ranks(mixed), relevant, k).mean())
    outputs["mix_minmax_ndcg"] = float(ndcg_at_k(ranks(mixed_scaled), relevant, k).mean())
    same_top = ranks(mixed).argmin(axis=1) == ranks(lexical).argmin(axis=1)
    outputs["mix_top1_is_bm25"] = float(same_top.mean())
    outputs["bm25_top_score"] = float(lexical.max(axis=1).mean())
    outputs["dense_top_score"] = float(dense.max(axis=1).mean())
    outputs["rrf_top_score"] = float(fused.max(axis=1).mean())
    outputs["queries"] = float(len(queries))
    outputs["passages"] = float(len(passages))
    outputs["relevant_per_query"] = float(relevant.sum(axis=1).mean())

    return Outcome(
        outputs=outputs,
        series=[
            Series(
                name=label,
                kind="bar",
                x=queries,
                y=per_query[system].tolist(),
                x_label="query",
                y_label=f"nDCG@{k}",
            )
            for system, label in SYSTEMS.items()
        ],
        notes=[
            "The dense ranker is LSA (TF-IDF + truncated SVD) fitted on this 63-passage corpus: "
            "a stand-in for a neural embedder, not one.",
            "The corpus and its labels were written for this demo: it shows directions, "
            "not benchmark numbers.",
            "Ties are broken by passage position in every ranking.",
        ],
    )


RETRIEVAL_HYBRID = Demo(spec=spec.RETRIEVAL_HYBRID, compute=compute)

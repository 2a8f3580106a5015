"""retrieval_hybrid: bm25s, LSA, RRF and the ranking metrics against independent references.

BM25 is checked against the formula worked by hand in plain Python, the LSA
stand-in against NumPy's own SVD, RRF against a plain loop, and the metrics
against scikit-learn's ``ndcg_score`` and hand-counted cases. Everything is
deterministic (no sampling), so the card's numbers are pinned to 1e-3.
"""

import math
from collections import Counter

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.metrics import ndcg_score  # type: ignore[import-untyped]

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.retrieval_corpus import (
    KEYWORD_QUERIES,
    PARAPHRASE_QUERIES,
    PASSAGES,
    QUERY_SETS,
)
from app.worker.demos.retrieval_hybrid import (
    bm25_scores,
    dense_scores,
    mrr_at_k,
    ndcg_at_k,
    ranks,
    recall_at_k,
    reciprocal_rank_fusion,
    tokenize,
)
from tests.worker.conftest import RunDemo

THREE = ["the cat sat on the mat with another cat", "a dog chased the cat", "dogs bark at night"]


def lucene_bm25_by_hand(
    docs: list[list[str]], query: list[str], k1: float, b: float
) -> list[float]:
    """Kamphuis et al.'s Lucene BM25, term by term: IDF ln(1 + (N − df + .5)/(df + .5))."""
    n = len(docs)
    average = sum(len(d) for d in docs) / n
    scores = []
    for doc in docs:
        counts = Counter(doc)
        total = 0.0
        for term in query:
            df = sum(term in d for d in docs)
            if df == 0 or counts[term] == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = counts[term]
            total += idf * tf / (tf + k1 * (1 - b + b * len(doc) / average))
        scores.append(total)
    return scores


def test_tokens_are_lower_case_words_of_two_letters_without_stop_words() -> None:
    assert tokenize(THREE) == [
        ["cat", "sat", "mat", "another", "cat"],
        ["dog", "chased", "cat"],
        ["dogs", "bark", "night"],
    ]


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (1.2, 0.0), (0.0, 1.0), (3.0, 1.0)])
@pytest.mark.parametrize("query", ["cat", "cat dog", "dogs night cat", "unicorn cat"])
def test_bm25s_default_method_is_the_lucene_formula(k1: float, b: float, query: str) -> None:
    measured = bm25_scores(THREE, [query], method="lucene", k1=k1, b=b)[0]
    expected = lucene_bm25_by_hand(tokenize(THREE), tokenize([query])[0], k1, b)
    assert measured.tolist() == pytest.approx(expected, abs=1e-12)


def test_one_bm25_score_worked_out() -> None:
    # "cat" is in 2 of 3 documents: IDF = ln(1 + 1.5/2.5) = ln 1.6. Document 1 has 5 tokens,
    # tf 2; the average length is (5 + 3 + 3)/3 = 11/3.
    idf = math.log(1.6)
    norm = 1 - 0.75 + 0.75 * 5 / (11 / 3)
    expected = idf * 2 / (2 + 1.5 * norm)
    assert bm25_scores(THREE, ["cat"], method="lucene", k1=1.5, b=0.75)[0, 0] == pytest.approx(
        expected, abs=1e-12
    )


def test_robertson_differs_from_lucene_only_in_its_idf() -> None:
    # bm25s's robertson: IDF ln((N − df + .5)/(df + .5)) (clamped at 0), same tf part, no (k1 + 1).
    docs = ["apple banana", "cherry date", "elder fig", "grape apple kiwi"]
    lucene = bm25_scores(docs, ["banana"], method="lucene", k1=1.5, b=0.75)[0]
    robertson = bm25_scores(docs, ["banana"], method="robertson", k1=1.5, b=0.75)[0]
    ratio = math.log((4 - 1 + 0.5) / 1.5) / math.log(1 + 3.5 / 1.5)
    assert robertson == pytest.approx(lucene * ratio, abs=1e-12)


def test_dense_scores_match_numpy_svd_of_the_same_tfidf_matrix() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer  # type: ignore[import-untyped]

    passages = list(PASSAGES.values())
    queries = list(QUERY_SETS["all"])
    vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens, sublinear_tf=True)
    matrix = vectorizer.fit_transform(tokenize(passages)).toarray()
    _, _, vt = np.linalg.svd(matrix, full_matrices=False)
    basis = vt[:16].T  # the top 16 right singular vectors; a sign flip leaves cosines alone
    p = matrix @ basis
    q = vectorizer.transform(tokenize(queries)).toarray() @ basis
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    assert dense_scores(passages, queries, dims=16) == pytest.approx(q @ p.T, abs=1e-8)


def test_ranks_put_the_highest_score_first_and_break_ties_by_position() -> None:
    assert ranks(np.array([[0.0, 2.0, 0.0, 3.0]])).tolist() == [[3, 2, 4, 1]]


@pytest.mark.parametrize("k", [0, 1, 60])
def test_rrf_equals_a_plain_loop(k: int) -> None:
    rng = np.random.default_rng(k)
    a, b = (np.argsort(rng.random((3, 9)), axis=1) + 1 for _ in range(2))
    fused = reciprocal_rank_fusion([a, b], k)
    for q in range(3):
        for d in range(9):
            assert fused[q, d] == pytest.approx(1 / (k + a[q, d]) + 1 / (k + b[q, d]), abs=1e-15)


def test_rrf_prefers_agreement_over_one_first_place() -> None:
    # d0: 1st and 40th; d1: 5th and 5th. With k = 60 agreement wins; with k = 0 the first place.
    first_once = (np.array([[1, 5]]), np.array([[40, 5]]))
    assert reciprocal_rank_fusion(list(first_once), 60).argmax() == 1
    assert reciprocal_rank_fusion(list(first_once), 0).argmax() == 0


def test_metrics_on_a_hand_counted_query() -> None:
    # Relevant passages at ranks 2 and 7 of 8, cutoff 5.
    rank = np.array([[2, 1, 3, 4, 5, 6, 7, 8]])
    relevant = np.array([[True, False, False, False, False, False, True, False]])
    assert recall_at_k(rank, relevant, 5).tolist() == [0.5]
    assert mrr_at_k(rank, relevant, 5).tolist() == [0.5]
    assert mrr_at_k(rank, relevant, 1).tolist() == [0.0]
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(rank, relevant, 5)[0] == pytest.approx((1 / math.log2(3)) / ideal, abs=1e-15)
    assert ndcg_at_k(rank, relevant, 8)[0] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(8)) / ideal, abs=1e-15
    )


@pytest.mark.parametrize("k", [1, 3, 5, 20])
def test_recall_and_mrr_equal_a_plain_loop_over_sorted_ids(k: int) -> None:
    rng = np.random.default_rng(100 + k)
    relevant = rng.random((50, 30)) < 0.1
    relevant[:, 0] |= ~relevant.any(axis=1)
    scores = rng.random((50, 30))
    recall, mrr = [], []
    for rel, s in zip(relevant, scores, strict=True):
        top = sorted(range(30), key=lambda d: -s[d])[:k]  # distinct scores: no ties
        recall.append(sum(bool(rel[d]) for d in top) / int(rel.sum()))
        mrr.append(next((1 / (i + 1) for i, d in enumerate(top) if rel[d]), 0.0))
    rank = ranks(scores)
    assert recall_at_k(rank, relevant, k) == pytest.approx(recall, abs=1e-15)
    assert mrr_at_k(rank, relevant, k) == pytest.approx(mrr, abs=1e-15)


@pytest.mark.parametrize("k", [1, 3, 5, 20])
def test_ndcg_matches_scikit_learn(k: int) -> None:
    rng = np.random.default_rng(k)
    relevant = rng.random((50, 30)) < 0.1
    relevant[:, 0] |= ~relevant.any(axis=1)  # every query has a relevant passage
    scores = rng.random((50, 30))
    rank = ranks(scores)
    # Distinct scores: scikit-learn's tie averaging never applies.
    expected = [ndcg_score([rel], [s], k=k) for rel, s in zip(relevant, scores, strict=True)]
    assert ndcg_at_k(rank, relevant, k) == pytest.approx(expected, abs=1e-12)


def test_every_label_names_a_passage_and_keyword_queries_share_a_rare_word() -> None:
    for queries in (KEYWORD_QUERIES, PARAPHRASE_QUERIES):
        for relevant in queries.values():
            assert relevant and set(relevant) <= set(PASSAGES)
    for query, relevant in KEYWORD_QUERIES.items():
        words = set(tokenize([query])[0])
        for pid in relevant:
            assert words & set(tokenize([PASSAGES[pid]])[0]), (query, pid)
    assert len(PASSAGES) == 63 and len(QUERY_SETS["all"]) == 24


def test_score_mix_reduces_to_each_ranker_at_its_ends(run: RunDemo) -> None:
    only_bm25 = run("retrieval_hybrid", mix_weight=0.0).outputs
    only_dense = run("retrieval_hybrid", mix_weight=1.0).outputs
    assert only_bm25["mix_ndcg"] == pytest.approx(only_bm25["bm25_ndcg"], abs=1e-12)
    assert only_dense["mix_ndcg"] == pytest.approx(only_dense["dense_ndcg"], abs=1e-12)


def test_rrf_top_score_is_at_most_two_over_k_plus_one(run: RunDemo) -> None:
    for k in (0, 60, 1000):
        assert run("retrieval_hybrid", rrf_k=k).outputs["rrf_top_score"] <= 2 / (k + 1) + 1e-15


# Card claims at the defaults (lucene, k1 1.5, b 0.75, 16 LSA dimensions, RRF k 60, cutoff 5).
@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"queries": "keyword"}, {"bm25_ndcg": 0.993, "dense_ndcg": 0.956, "rrf_ndcg": 0.993}),
        ({"queries": "paraphrase"}, {"bm25_ndcg": 0.576, "dense_ndcg": 0.757, "rrf_ndcg": 0.699}),
        (
            {},
            {
                "bm25_ndcg": 0.785,
                "dense_ndcg": 0.856,
                "rrf_ndcg": 0.846,
                "bm25_recall": 0.764,
                "dense_recall": 0.889,
                "rrf_recall": 0.868,
                "mix_top1_is_bm25": 1.0,
                "bm25_top_score": 3.973,
                "dense_top_score": 0.935,
            },
        ),
        (
            {"queries": "paraphrase"},
            {"bm25_recall": 0.528, "dense_recall": 0.778},
        ),
        ({"queries": "paraphrase", "svd_dims": 8}, {"dense_ndcg": 0.639, "rrf_ndcg": 0.734}),
        ({"k1": 0.0}, {"bm25_ndcg": 0.798}),
        ({"b": 0.0}, {"bm25_ndcg": 0.797}),
        ({"method": "atire"}, {"bm25_top_score": 10.686}),
        ({"method": "robertson"}, {"bm25_ndcg": 0.783}),
        ({"rrf_k": 1}, {"rrf_ndcg": 0.870}),
        ({"mix_weight": 0.9}, {"mix_ndcg": 0.874}),
        ({}, {"mix_ndcg": 0.857, "mix_minmax_ndcg": 0.864, "rrf_top_score": 0.0327}),
    ],
)
def test_card_numbers(run: RunDemo, params: dict[str, object], expected: dict[str, float]) -> None:
    outputs = run("retrieval_hybrid", **params).outputs
    for name, value in expected.items():
        assert outputs[name] == pytest.approx(value, abs=1e-3), name


def test_the_dense_stand_in_confuses_near_miss_identifiers_and_bm25_does_not() -> None:
    # The bm25 card's example: "error KX-7781 ledger" against notes on KX-7781 and KX-7718.
    ids, passages = list(PASSAGES), list(PASSAGES.values())
    query = ["error KX-7781 ledger"]
    bm25_top = ids[
        int(ranks(bm25_scores(passages, query, method="lucene", k1=1.5, b=0.75))[0].argmin())
    ]
    dense_top = ids[int(ranks(dense_scores(passages, query, dims=16))[0].argmin())]
    assert (bm25_top, dense_top) == ("ops-01", "ops-13")


def test_lexical_wins_keyword_queries_and_dense_wins_paraphrases(run: RunDemo) -> None:
    keyword = run("retrieval_hybrid", queries="keyword").outputs
    paraphrase = run("retrieval_hybrid", queries="paraphrase").outputs
    assert keyword["bm25_ndcg"] > keyword["dense_ndcg"]
    assert paraphrase["dense_ndcg"] > paraphrase["bm25_ndcg"]
    for outputs in (keyword, paraphrase):  # fusion never falls below the weaker ranker here
        assert outputs["rrf_ndcg"] >= min(outputs["bm25_ndcg"], outputs["dense_ndcg"])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"svd_dims": 63}, "svd_dims must be an integer between 2 and 48, got 63"),
        ({"b": 1.5}, "b must be a number between 0 and 1, got 1.5"),
        ({"cutoff": 0}, "cutoff must be an integer between 1 and 20, got 0"),
    ],
)
def test_bad_parameters_are_refused(raw: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("retrieval_hybrid").validate(raw)
    assert [p.message for p in caught.value.problems] == [message]


def test_bad_parameters_get_a_422(client: TestClient) -> None:
    response = client.post("/demos/retrieval_hybrid", json={"rrf_k": -1, "queries": "vague"})
    assert response.status_code == 422
    assert {p["param"] for p in response.json()["detail"]} == {"rrf_k", "queries"}

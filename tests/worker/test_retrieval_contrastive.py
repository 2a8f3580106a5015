"""contrastive and matryoshka against references computed without the demo.

InfoNCE with in-batch negatives is row i's cross-entropy against column i of S / τ:
mean_i [ln Σ_j e^{s_ij/τ} − s_ii/τ]. With every similarity equal it is exactly ln B.
Its gradient with respect to s_ij (j ≠ i) is p_ij / τ, which autograd confirms below.
recall@k is |found ∩ exact| / k per query, checked against Python sets over NumPy's
argsort.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fastapi.testclient import TestClient

from app.worker.demos.retrieval_contrastive import (
    ContrastiveParams,
    MatryoshkaParams,
    effective_negatives,
    generated,
    info_nce,
    negative_weights,
    neighbours,
    random_rotation,
    recall_at_k,
    unit_pairs,
)
from app.worker.device import seeded
from tests.worker.conftest import RunDemo


def reference_info_nce(similarity: np.ndarray, tau: float) -> float:
    """InfoNCE in plain Python: a log-sum-exp per row, minus the row's own logit."""
    rows = []
    for i, row in enumerate(similarity.tolist()):
        logits = [s / tau for s in row]
        top = max(logits)
        rows.append(top + math.log(sum(math.exp(z - top) for z in logits)) - logits[i])
    return sum(rows) / len(rows)


def reference_recall(queries: np.ndarray, docs: np.ndarray, exact: np.ndarray, k: int) -> float:
    """Brute-force recall@k: NumPy's full argsort of the dot products, then set overlap."""
    found = np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :k]
    return float(np.mean([len(set(f) & set(e)) / k for f, e in zip(found, exact, strict=True)]))


# --- contrastive: the loss ---------------------------------------------------------------


@pytest.mark.parametrize("batch", [2, 7, 256, 1024])
@pytest.mark.parametrize("value", [0.0, 1.0, -0.3])
def test_equal_similarities_give_exactly_ln_b(batch: int, value: float) -> None:
    similarity = torch.full((batch, batch), value, dtype=torch.float64)
    assert info_nce(similarity, 0.07).item() == pytest.approx(math.log(batch), abs=1e-12)


def test_identical_embeddings_give_ln_b() -> None:
    # A collapsed encoder maps everything to one vector: every cosine is 1.
    vector = F.normalize(torch.randn(1, 32, dtype=torch.float64), dim=1)
    same = vector.expand(64, 32)
    assert info_nce(same @ same.T, 0.05).item() == pytest.approx(math.log(64), abs=1e-9)


@pytest.mark.parametrize("tau", [0.01, 0.07, 1.0, 5.0])
def test_info_nce_matches_a_plain_python_loop(tau: float) -> None:
    rng = np.random.default_rng(3)
    queries = rng.normal(size=(9, 5))
    docs = rng.normal(size=(9, 5))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    similarity = queries @ docs.T
    measured = info_nce(torch.from_numpy(similarity), tau).item()
    assert measured == pytest.approx(reference_info_nce(similarity, tau), rel=1e-12)


def test_symmetric_loss_averages_both_directions(run: RunDemo) -> None:
    params = ContrastiveParams(batch=12, dim=6, temperature=0.2, alignment=0.4, seed=5)
    queries, docs = unit_pairs(params, torch.device("cpu"))
    similarity = (queries @ docs.T).numpy()
    expected = (
        reference_info_nce(similarity, 0.2) + reference_info_nce(similarity.T.copy(), 0.2)
    ) / 2
    outputs = run("contrastive", batch=12, dim=6, temperature=0.2, alignment=0.4, seed=5).outputs
    assert outputs["loss"] == pytest.approx(reference_info_nce(similarity, 0.2), rel=1e-12)
    assert outputs["symmetric_loss"] == pytest.approx(expected, rel=1e-12)


def test_large_temperature_gives_ln_b_and_uniform_negatives(run: RunDemo) -> None:
    outputs = run("contrastive", batch=256, dim=128, temperature=10.0).outputs
    assert outputs["loss"] == pytest.approx(math.log(256), abs=0.005)
    assert outputs["effective_negatives"] == pytest.approx(255, rel=1e-3)
    assert outputs["top_negative_share"] == pytest.approx(1 / 255, rel=0.05)


@pytest.mark.parametrize(("batch", "dim"), [(64, 16), (256, 128), (1024, 512)])
def test_at_initialisation_loss_is_ln_b_plus_half_the_logit_variance(
    run: RunDemo, batch: int, dim: int
) -> None:
    tau = 1 / math.sqrt(dim)  # σ = 1: the largest σ the theory is given for
    result = run("contrastive", batch=batch, dim=dim, temperature=tau)
    outputs, theory = result.outputs, result.theory
    assert theory["loss"] == pytest.approx(math.log(batch) + 0.5, abs=1e-9)
    # Over 10 seeds the mean was within 0.06 of it; one seed's loss moved by up to 0.27
    # at B = 64 (the positives' logits are B samples) and 0.05 at B = 1024.
    assert outputs["loss"] == pytest.approx(theory["loss"], abs=0.3 if batch == 64 else 0.1)
    # exp(entropy) of log-normal weights: (B − 1) e^{−σ²/2}; within 6% over 10 seeds.
    assert outputs["effective_negatives"] == pytest.approx(theory["effective_negatives"], rel=0.1)


@pytest.mark.parametrize("dim", [4, 64, 1024])
def test_random_unit_cosines_have_variance_one_over_d(run: RunDemo, dim: int) -> None:
    # E[(u·v)²] = 1/d exactly for independent uniform unit vectors.
    outputs = run("contrastive", batch=512, dim=dim).outputs
    assert outputs["cosine_std"] == pytest.approx(1 / math.sqrt(dim), rel=0.02)
    assert outputs["logit_std"] == pytest.approx(outputs["cosine_std"] / 0.07, rel=1e-12)


def test_small_temperature_breaks_ln_b_and_concentrates_the_gradient(run: RunDemo) -> None:
    small = run("contrastive", batch=256, dim=128, temperature=0.01)
    assert small.outputs["excess"] > 10  # σ ≈ 8.8: random similarities dominate
    assert "loss" not in small.theory
    assert small.outputs["top_negative_share"] > 0.5
    assert small.outputs["effective_negatives"] < 5
    # Along the sweep, the effective number of negatives only grows with τ.
    effective = next(s for s in small.series if s.name.startswith("effective")).y
    assert effective == sorted(effective)
    assert effective[0] < 5 and effective[-1] > 250


def test_negative_weights_are_the_gradient_shares_autograd_finds() -> None:
    generator = torch.Generator().manual_seed(0)
    similarity = torch.rand(6, 6, generator=generator, dtype=torch.float64) * 2 - 1
    tau = 0.1
    with torch.enable_grad():
        leaf = similarity.clone().requires_grad_(True)
        targets = torch.arange(6)
        F.cross_entropy(leaf / tau, targets, reduction="sum").backward()
    assert leaf.grad is not None
    gradient = leaf.grad.clone()
    gradient.fill_diagonal_(0.0)
    shares = gradient / gradient.sum(dim=1, keepdim=True)
    assert torch.allclose(negative_weights(similarity, tau), shares, atol=1e-12)


def test_effective_negatives_is_exp_entropy() -> None:
    weights = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0, 0, 0]])
    # exp(ln 2), exp(ln 4), exp(0): mean (2 + 4 + 1) / 3.
    assert effective_negatives(weights.double()) == pytest.approx(7 / 3, rel=1e-12)


def test_loss_floor_bounds_an_aligned_batch(run: RunDemo) -> None:
    outputs = run("contrastive", batch=128, dim=64, temperature=1.0, alignment=0.99).outputs
    assert outputs["loss_floor"] == pytest.approx(math.log(1 + 127 * math.exp(-2)), rel=1e-12)
    assert outputs["top1_accuracy"] == 1.0
    assert outputs["loss_floor"] < outputs["loss"] < math.log(128)
    # At τ = 0.05 the same pairs drive the loss close to 0.
    sharp = run("contrastive", batch=128, dim=64, temperature=0.05, alignment=0.99).outputs
    assert sharp["loss"] < 0.01


def test_theory_is_left_out_where_the_expansion_fails(run: RunDemo) -> None:
    assert "loss" not in run("contrastive", temperature=0.07).theory  # σ ≈ 1.26
    assert "loss" not in run("contrastive", batch=16, temperature=1.0).theory
    assert "loss" not in run("contrastive", dim=8, temperature=1.0).theory
    assert "loss" not in run("contrastive", alignment=0.5, temperature=1.0).theory


# --- matryoshka --------------------------------------------------------------------------


@pytest.mark.parametrize(("queries", "docs", "k"), [(5, 40, 1), (8, 100, 10), (3, 12, 12)])
def test_neighbours_and_recall_match_brute_force(queries: int, docs: int, k: int) -> None:
    rng = np.random.default_rng(queries)
    q, d = rng.normal(size=(queries, 7)), rng.normal(size=(docs, 7))
    exact = np.argsort(-(q @ d.T), axis=1)[:, :k]
    found = neighbours(torch.from_numpy(q), torch.from_numpy(d), k)
    assert [set(row) for row in found.tolist()] == [set(row) for row in exact.tolist()]
    shifted = q + rng.normal(scale=0.8, size=q.shape)
    measured = recall_at_k(
        neighbours(torch.from_numpy(shifted), torch.from_numpy(d), k), torch.from_numpy(exact), docs
    )
    assert measured == pytest.approx(reference_recall(shifted, d, exact, k), abs=1e-12)


def test_front_loaded_recall_matches_a_numpy_search_of_the_same_vectors(run: RunDemo) -> None:
    params = MatryoshkaParams(docs=300, queries=20, dim=32, truncate=8, k=10, seed=4)
    cpu = torch.device("cpu")
    queries, docs = (x.numpy() for x in generated(params, seeded(cpu, 4), cpu))
    exact = np.argsort(-(queries @ docs.T), axis=1)[:, :10]
    head_q, head_d = queries[:, :8], docs[:, :8]
    head_q = head_q / np.linalg.norm(head_q, axis=1, keepdims=True)
    head_d = head_d / np.linalg.norm(head_d, axis=1, keepdims=True)
    outputs = run("matryoshka", docs=300, queries=20, dim=32, truncate=8, k=10, seed=4).outputs
    assert outputs["recall_front_loaded"] == pytest.approx(
        reference_recall(head_q, head_d, exact, 10), abs=1e-12
    )
    raw = reference_recall(queries[:, :8], docs[:, :8], exact, 10)
    assert outputs["recall_front_loaded_dot"] == pytest.approx(raw, abs=1e-12)


@pytest.mark.parametrize("decay", [0.0, 1.0, 3.0])
def test_all_dimensions_give_recall_one(run: RunDemo, decay: float) -> None:
    outputs = run("matryoshka", dim=64, truncate=64, decay=decay).outputs
    for name in ("recall_front_loaded", "recall_front_loaded_dot", "recall_rotated", "recall_pca"):
        assert outputs[name] == 1.0, name


@pytest.mark.parametrize("decay", [1.0, 2.0])
def test_recall_grows_with_the_dimensions_kept(run: RunDemo, decay: float) -> None:
    result = run("matryoshka", decay=decay)
    for curve in result.series:
        if curve.name == "rotated":
            continue  # near 0 at small m, where one query more or less makes a dip
        widths = [int(x) for x in curve.x]  # type: ignore[arg-type]
        from_four = curve.y[widths.index(4) :]
        assert from_four == sorted(from_four), curve.name


def test_truncation_works_front_loaded_or_after_pca_not_spread(run: RunDemo) -> None:
    outputs = run("matryoshka", decay=1.0, truncate=32).outputs
    assert outputs["recall_front_loaded"] > outputs["recall_rotated"] + 0.3
    assert outputs["recall_pca"] == pytest.approx(outputs["recall_front_loaded"], abs=0.05)
    isotropic = run("matryoshka", decay=0.0, truncate=32).outputs
    assert isotropic["recall_front_loaded"] < 0.1 and isotropic["recall_pca"] < 0.15


def test_a_random_rotation_spreads_the_energy_evenly(run: RunDemo) -> None:
    rotation = random_rotation(48, seeded(torch.device("cpu"), 0), torch.device("cpu")).numpy()
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(48), atol=1e-12)
    # m/d is the expectation over rotations; one rotation of a spectrum with few effective
    # dimensions scatters around it (decay 2 ranged 0.096–0.156 over 10 seeds), so average.
    shares = [
        run("matryoshka", docs=500, queries=10, decay=decay, truncate=32, seed=seed).outputs[
            "energy_rotated"
        ]
        for decay in (0.0, 2.0)
        for seed in range(10)
    ]
    assert max(shares[:10]) == pytest.approx(32 / 256, rel=0.05)  # isotropic: tight
    assert min(shares[:10]) == pytest.approx(32 / 256, rel=0.05)
    assert sum(shares[10:]) / 10 == pytest.approx(32 / 256, rel=0.1)
    outputs = run("matryoshka", decay=2.0, truncate=32).outputs
    assert outputs["energy_front_loaded"] > 0.9
    assert outputs["compression"] == 8


def test_default_parameters_pass_their_own_budget() -> None:
    ContrastiveParams.model_validate(ContrastiveParams().model_dump())
    MatryoshkaParams.model_validate(MatryoshkaParams().model_dump())


# --- bad parameters ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"batch": 1}, "batch"),
        ({"batch": 1024, "dim": 1024}, "dim"),
        ({"temperature": 0}, "temperature"),
        ({"alignment": 1.0}, "alignment"),
    ],
)
def test_bad_contrastive_parameters_are_422(
    client: TestClient, body: dict[str, object], param: str
) -> None:
    response = client.post("/demos/contrastive", json=body)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert [problem["param"] for problem in problems] == [param]
    assert "{" not in problems[0]["message"]  # every template field filled in
    if param == "dim":
        assert "got 1,073,741,824: lower dim to 512 or less" in problems[0]["message"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"dim": 64, "truncate": 65}, "truncate"),
        ({"docs": 20_000, "queries": 200, "dim": 32}, "queries"),
        ({"docs": 8192, "queries": 10, "dim": 512}, "dim"),
        ({"docs": 2000, "queries": 1000, "dim": 64}, "dim"),
        ({"docs": 20_000, "queries": 100, "dim": 512}, "dim"),
        ({"k": 101}, "k"),
        ({"decay": -1}, "decay"),
    ],
)
def test_bad_matryoshka_parameters_are_422(
    client: TestClient, body: dict[str, object], param: str
) -> None:
    response = client.post("/demos/matryoshka", json=body)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert [problem["param"] for problem in problems] == [param]
    message = problems[0]["message"]
    assert "{" not in message  # every template field filled in
    if param == "truncate":
        assert "cannot exceed the embedding width d (64): lower truncate to 64" in message
    if param == "dim":
        # The suggested dim must pass both caps: follow it and the request is accepted.
        fit = int(message.rsplit("lower dim to ", 1)[1].split()[0])
        accepted = client.post("/demos/matryoshka", json={**body, "dim": fit, "truncate": 1})
        rejected = client.post("/demos/matryoshka", json={**body, "dim": fit + 1, "truncate": 1})
        assert accepted.status_code == 200 and rejected.status_code == 422

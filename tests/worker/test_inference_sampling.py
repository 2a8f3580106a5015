"""sampling_filters: each filter against a plain numpy reference written from its definition.

The reference reads each filter as transformers documents it, not as its code
computes it: top-k keeps the tokens whose logit is at least the k-th largest;
top-p keeps the smallest set of most likely tokens whose probability adds up
to top_p or more (walked in descending order, not by removing an ascending
tail); min-p keeps p ≥ min_p · max p. Entropies are checked against
``scipy.stats.entropy``.
"""

import math
from typing import Any

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from scipy.stats import entropy as scipy_entropy

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.inference_sampling import (
    draw_logits,
    min_p_keep,
    top_k_keep,
    top_p_keep,
)
from tests.worker.conftest import RunDemo

Mask = np.ndarray[Any, np.dtype[np.bool_]]
Vector = np.ndarray[Any, np.dtype[np.float64]]


# --- the reference ------------------------------------------------------------------------------


def softmax(z: Vector) -> Vector:
    e = np.exp(z - z[np.isfinite(z)].max())
    return e / e.sum()


def ref_top_k(z: Vector, k: int, min_keep: int = 1) -> Mask:
    k = min(max(k, min_keep), len(z))
    kth = sorted(z, reverse=True)[k - 1]
    return np.array([value >= kth for value in z])


def ref_top_p(z: Vector, top_p: float, min_keep: int = 1) -> Mask:
    p = softmax(z)
    keep = np.zeros(len(z), dtype=bool)
    total = 0.0
    for count, index in enumerate(sorted(range(len(z)), key=lambda i: -p[i]), start=1):
        if total >= top_p and count > min_keep:
            break
        keep[index] = True
        total += p[index]
    return keep


def ref_min_p(z: Vector, min_p: float, min_keep: int = 1) -> Mask:
    p = softmax(z)
    keep = p >= min_p * p.max()
    keep[np.argsort(-p, kind="stable")[:min_keep]] = True
    return keep


def ref_chain(z: Vector, top_k: int, top_p: float, min_p: float, min_keep: int = 1) -> Mask:
    """top-k, then top-p, then min-p, each on the distribution the previous one left."""
    keep = np.ones(len(z), dtype=bool)
    for active, rule in (
        (top_k != 0, lambda s: ref_top_k(s, top_k, min_keep)),
        (top_p < 1, lambda s: ref_top_p(s, top_p, min_keep)),
        (True, lambda s: ref_min_p(s, min_p, min_keep)),
    ):
        if active:
            keep &= rule(np.where(keep, z, -np.inf))
    return keep


def as_numpy(mask: torch.Tensor) -> Mask:
    return mask.numpy()


# --- each filter on hand-checkable vectors ------------------------------------------------------

# Thresholds on HALVES stay clear of the exact sums (exp and log round); TIED's softmax is
# exact (exp(0) = 1, divided by 4), so it carries the cases that land exactly on top_p.
HALVES = np.log([0.5, 0.25, 0.125, 0.125])  # probabilities 1/2, 1/4, 1/8, 1/8
TIED = np.zeros(4)  # four equal logits: every probability exactly 1/4


@pytest.mark.parametrize(
    ("z", "k", "min_keep", "expected"),
    [
        (HALVES, 1, 1, [True, False, False, False]),
        (HALVES, 3, 1, [True, True, True, True]),  # a tie at the 3rd keeps both 1/8s
        (HALVES, 2, 3, [True, True, True, True]),  # k raised to min_tokens_to_keep
        (HALVES, 9, 1, [True, True, True, True]),  # k ≥ V keeps everything
        (TIED, 1, 1, [True, True, True, True]),  # all tied: top-1 keeps all four
    ],
)
def test_top_k_keeps_every_logit_at_least_the_kth(
    z: Vector, k: int, min_keep: int, expected: list[bool]
) -> None:
    assert ref_top_k(z, k, min_keep).tolist() == expected
    assert top_k_keep(torch.from_numpy(z), k, min_keep).tolist() == expected


@pytest.mark.parametrize(
    ("z", "top_p", "min_keep", "kept"),
    [
        (HALVES, 0.3, 1, 1),
        (HALVES, 0.49, 1, 1),
        (HALVES, 0.51, 1, 2),
        (HALVES, 0.8, 1, 3),
        (HALVES, 0.5, 3, 3),  # min_tokens_to_keep wins
        (TIED, 0.5, 1, 2),  # 1/4 + 1/4 reaches 0.5 exactly
        (TIED, 0.75, 1, 3),
        (TIED, 0.76, 1, 4),
        (TIED, 0.001, 1, 1),
    ],
)
def test_top_p_keeps_the_smallest_set_reaching_top_p(
    z: Vector, top_p: float, min_keep: int, kept: int
) -> None:
    assert ref_top_p(z, top_p, min_keep).sum() == kept
    mask = top_p_keep(torch.from_numpy(z), top_p, min_keep)
    assert mask.sum().item() == kept
    assert softmax(z)[as_numpy(mask)].sum() >= top_p - 1e-12


@pytest.mark.parametrize(
    ("z", "min_p", "min_keep", "expected"),
    [
        (HALVES, 0.0, 1, [True, True, True, True]),  # min_p 0 keeps every token
        (HALVES, 0.24, 1, [True, True, True, True]),  # 1/8 ≥ 0.24 · 1/2
        (HALVES, 0.26, 1, [True, True, False, False]),
        (HALVES, 1.0, 1, [True, False, False, False]),
        (HALVES, 1.0, 2, [True, True, False, False]),
        (TIED, 1.0, 1, [True, True, True, True]),  # all equal the top probability
    ],
)
def test_min_p_scales_its_threshold_by_the_top_probability(
    z: Vector, min_p: float, min_keep: int, expected: list[bool]
) -> None:
    assert ref_min_p(z, min_p, min_keep).tolist() == expected
    assert min_p_keep(torch.from_numpy(z), min_p, min_keep).tolist() == expected


def test_min_p_threshold_is_relative_so_it_moves_with_the_top_token() -> None:
    peaked = np.log([0.9, 0.05, 0.03, 0.02])  # threshold 0.1 × 0.9 = 0.09: only the top
    flat = np.log([0.3, 0.25, 0.25, 0.2])  # threshold 0.03: all four
    assert min_p_keep(torch.from_numpy(peaked), 0.1).sum().item() == 1
    assert min_p_keep(torch.from_numpy(flat), 0.1).sum().item() == 4


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("min_keep", [1, 7])
def test_filters_match_the_reference_on_random_logits(seed: int, min_keep: int) -> None:
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 2, size=200)
    for k in (1, 5, 50, 200):
        assert (
            top_k_keep(torch.from_numpy(z), k, min_keep).numpy() == ref_top_k(z, k, min_keep)
        ).all()
    for p in (0.1, 0.5, 0.9, 0.99):
        assert (
            top_p_keep(torch.from_numpy(z), p, min_keep).numpy() == ref_top_p(z, p, min_keep)
        ).all()
    for m in (0.0, 0.01, 0.1, 0.5):
        assert (
            min_p_keep(torch.from_numpy(z), m, min_keep).numpy() == ref_min_p(z, m, min_keep)
        ).all()


# --- the demo against the reference -------------------------------------------------------------


def reference_outputs(z: Vector, params: dict[str, Any]) -> dict[str, float]:
    """Every count, mass and entropy the demo reports, from numpy and scipy alone."""
    scores = z / params["temperature"]
    p = softmax(scores)
    min_keep = params["min_tokens_to_keep"]
    masks = {
        "top_k": ref_top_k(scores, params["top_k"], min_keep)
        if params["top_k"]
        else np.ones(len(z), dtype=bool),
        "nucleus": ref_top_p(scores, params["top_p"], min_keep)
        if params["top_p"] < 1
        else np.ones(len(z), dtype=bool),
        "min_p": ref_min_p(scores, params["min_p"], min_keep),
        "combined": ref_chain(scores, params["top_k"], params["top_p"], params["min_p"], min_keep),
    }
    outputs = {"entropy": scipy_entropy(p), "entropy_at_t1": scipy_entropy(softmax(z))}
    for name, keep in masks.items():
        outputs[f"{name}_mass"] = p[keep].sum()
        outputs[f"{name}_entropy"] = scipy_entropy(np.where(keep, p, 0.0))  # renormalises
    counts = {"top_k_kept": "top_k", "nucleus_size": "nucleus", "min_p_kept": "min_p"}
    outputs |= {out: masks[name].sum() for out, name in counts.items()}
    outputs["combined_kept"] = masks["combined"].sum()
    outputs["top_prob"] = p.max()
    outputs["min_p_threshold"] = params["min_p"] * p.max()
    return {name: float(value) for name, value in outputs.items()}


SETTINGS = [
    {},
    {"temperature": 0.7},
    {"temperature": 1.5},
    {"top_k": 0, "top_p": 0.95, "min_p": 0.1},
    {"top_k": 20, "top_p": 1.0, "min_p": 0.0, "min_tokens_to_keep": 30},
    {"exponent": 0.8, "noise": 2.0, "top_p": 0.5},
]


@pytest.mark.parametrize("overrides", SETTINGS)
def test_outputs_equal_the_reference_on_zipf_logits(
    run: RunDemo, overrides: dict[str, Any]
) -> None:
    params = {"vocab": 2000, "noise": 0.0, **overrides}
    result = run("sampling_filters", **params)
    z = -result.params["exponent"] * np.log(np.arange(1, 2001, dtype=np.float64))
    if result.params["noise"] > 0:  # the same seeded draw the demo made
        z = draw_logits(get_demo("sampling_filters").validate(params), torch.device("cpu")).numpy()
    expected = reference_outputs(z, result.params)
    for name, value in expected.items():
        assert result.outputs[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


# What content/inference/sampling-temperature-top-k-top-p-min-p.md states for the default draw
# (32,000 tokens, exponent 1.1, noise 0.5, seed 0): counts exactly, the rest to its last digit.
@pytest.mark.parametrize(
    ("temperature", "output", "expected", "tolerance"),
    [
        (1.0, "entropy", 6.81, 0.01),
        (1.0, "top_prob", 0.0575, 0.0005),
        (0.7, "top_k_mass", 0.867, 0.001),
        (1.0, "top_k_mass", 0.476, 0.001),
        (1.5, "top_k_mass", 0.122, 0.001),
        (0.7, "nucleus_size", 82, 0),
        (1.0, "nucleus_size", 6029, 0),
        (1.5, "nucleus_size", 20784, 0),
        (0.7, "min_p_kept", 18, 0),
        (1.0, "min_p_kept", 39, 0),
        (1.5, "min_p_kept", 148, 0),
        (1.5, "combined_kept", 40, 0),
    ],
)
def test_the_cards_numbers(
    run: RunDemo, temperature: float, output: str, expected: float, tolerance: float
) -> None:
    outputs = run("sampling_filters", temperature=temperature).outputs
    assert outputs[output] == pytest.approx(expected, abs=tolerance)


def test_the_chain_is_not_the_intersection_of_the_filters(run: RunDemo) -> None:
    # At τ 1.5 top-k keeps 50 tokens; top-p then measures 0.9 of *their* renormalised mass.
    outputs = run("sampling_filters", temperature=1.5).outputs
    alone = min(outputs["top_k_kept"], outputs["nucleus_size"], outputs["min_p_kept"])
    assert outputs["combined_kept"] < alone


def test_temperature_near_zero_leaves_one_token(run: RunDemo) -> None:
    outputs = run("sampling_filters", temperature=0.01, noise=0.0).outputs
    assert outputs["top_prob"] == pytest.approx(1.0, abs=1e-12)
    assert outputs["entropy"] == pytest.approx(0.0, abs=1e-12)
    assert outputs["nucleus_size"] == outputs["min_p_kept"] == outputs["combined_kept"] == 1
    assert outputs["top_k_kept"] == 50  # top-k counts tokens, whatever their mass
    assert outputs["top_k_mass"] == pytest.approx(1.0, abs=1e-12)


def test_filters_set_off_keep_the_whole_vocabulary(run: RunDemo) -> None:
    outputs = run("sampling_filters", vocab=1000, top_k=0, top_p=1.0, min_p=0.0).outputs
    for name in ("top_k_kept", "nucleus_size", "min_p_kept", "combined_kept"):
        assert outputs[name] == 1000
    assert outputs["combined_entropy"] == pytest.approx(outputs["entropy"], rel=1e-12)
    uniform = run("sampling_filters", vocab=1000, exponent=0.0, noise=0.0, top_k=3).outputs
    assert uniform["entropy"] == pytest.approx(math.log(1000), rel=1e-12)
    assert uniform["top_k_kept"] == 1000  # every logit ties with the 3rd


def test_theory_matches_for_top_k_and_min_p(run: RunDemo) -> None:
    for temperature in (0.5, 1.0, 2.0):
        result = run("sampling_filters", temperature=temperature)
        assert result.outputs["top_k_kept"] == result.theory["top_k_kept"] == 50
        assert result.outputs["min_p_kept"] == result.theory["min_p_kept"]


@pytest.mark.parametrize(
    "overrides",
    [{}, {"top_p": 0.3, "min_p": 0.5, "min_tokens_to_keep": 30}, {"top_p": 1.0, "noise": 1.0}],
)
def test_series_track_the_nucleus_and_min_p_against_temperature(
    run: RunDemo, overrides: dict[str, Any]
) -> None:
    params = {"vocab": 2000, "noise": 0.0, **overrides}
    result = run("sampling_filters", **params)
    nucleus, survivors = result.series
    z = draw_logits(get_demo("sampling_filters").validate(params), torch.device("cpu")).numpy()
    top_p, min_p, keep = (result.params[name] for name in ("top_p", "min_p", "min_tokens_to_keep"))
    assert isinstance(top_p, float) and isinstance(min_p, float) and isinstance(keep, int)
    for tau, size, kept in zip(nucleus.x, nucleus.y, survivors.y, strict=True):
        assert isinstance(tau, float)
        assert size == (ref_top_p(z / tau, top_p, keep).sum() if top_p < 1 else 2000)
        assert kept == ref_min_p(z / tau, min_p, keep).sum()
    # A hotter distribution is flatter: both filters keep more tokens as τ rises.
    assert nucleus.y == sorted(nucleus.y) and survivors.y == sorted(survivors.y)


# --- parameters ---------------------------------------------------------------------------------


def test_omitted_top_k_is_checked_against_the_vocabulary() -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("sampling_filters").validate({"vocab": 10})  # top_k defaults to 50
    assert caught.value.problems[0].message == ("top_k must be at most the vocabulary (10), got 50")


@pytest.mark.parametrize(
    "body",
    [
        {"temperature": 0},
        {"temperature": -1.0},
        {"top_p": 0},
        {"top_p": 1.5},
        {"top_k": -1},
        {"vocab": 100, "top_k": 101},
        {"min_p": 1.5},
        {"min_p": -0.1},
        {"vocab": 100, "top_k": 10, "min_tokens_to_keep": 101},
        {"exponent": -1.0},
        {"noise": -0.5},
        {"vocab": 1},
    ],
)
def test_bad_parameters_are_refused(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/demos/sampling_filters", json=body)
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] in body

"""perplexity: exact values for a uniform model, and the sampled loss against its expectation.

Tolerances come from 30 seeds at each setting (docs/demos.md): each is wider than
the spread seen there.
"""

import math

import pytest
from fastapi.testclient import TestClient

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from tests.worker.conftest import RunDemo


@pytest.mark.parametrize("vocab", [2, 256, 50_000])
def test_a_uniform_model_has_perplexity_equal_to_the_vocabulary(run: RunDemo, vocab: int) -> None:
    outputs = run("perplexity", vocab=vocab, tokens=32, logit_std=0.0).outputs
    assert outputs["cross_entropy"] == pytest.approx(math.log(vocab), rel=1e-12)
    assert outputs["perplexity"] == pytest.approx(vocab, rel=1e-12)
    assert outputs["bits_per_token"] == pytest.approx(math.log2(vocab), rel=1e-12)
    assert outputs["bits_per_byte"] == pytest.approx(math.log2(vocab) * 0.29335, rel=1e-12)
    assert outputs["kl_divergence"] == pytest.approx(0.0, abs=1e-12)


def test_the_units_convert_into_each_other(run: RunDemo) -> None:
    outputs = run("perplexity", tokens_per_byte=0.25).outputs
    ce = outputs["cross_entropy"]
    assert outputs["perplexity"] == pytest.approx(math.exp(ce), rel=1e-12)
    assert outputs["bits_per_token"] == pytest.approx(ce / math.log(2), rel=1e-12)
    assert outputs["perplexity_from_bits"] == pytest.approx(outputs["perplexity"], rel=1e-12)
    assert outputs["bits_per_byte"] == pytest.approx(outputs["bits_per_token"] / 4, rel=1e-12)


# Card claims at the defaults (256 tokens of vocabulary, 8192 positions, σ 2). Over 30 seeds:
# cross-entropy 3.756-3.839 (expected 3.771), perplexity 42.8-46.5; entropy 3.767-3.787;
# KL 0.407-0.413 at τ 2 and 0.900-0.911 at τ 0.5; average of 1024 chunk perplexities
# 1.18-1.24 times the perplexity.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "cross_entropy", 3.77, 0.08),
        ({}, "perplexity", 43.4, 3.5),
        ({}, "entropy", 3.77, 0.03),
        ({"temperature": 2.0}, "kl_divergence", 0.41, 0.015),
        ({"temperature": 0.5}, "kl_divergence", 0.905, 0.02),
    ],
)
def test_sampled_loss_matches_its_expectation(
    run: RunDemo, params: dict[str, float], output: str, expected: float, tolerance: float
) -> None:
    result = run("perplexity", **params)
    assert result.outputs[output] == pytest.approx(expected, abs=tolerance)
    if output in result.theory:
        assert result.theory[output] == pytest.approx(expected, abs=tolerance / 4)


def test_any_temperature_but_one_costs_loss(run: RunDemo) -> None:
    calibrated = run("perplexity", tokens=1024).outputs
    assert calibrated["kl_divergence"] == pytest.approx(0.0, abs=1e-12)
    series = run("perplexity", tokens=1024).series
    expected = {s.name: s for s in series}["expected cross-entropy"]
    best = expected.x[expected.y.index(min(expected.y))]
    assert best == 1.0


def test_averaging_chunk_perplexities_overstates_the_perplexity(run: RunDemo) -> None:
    outputs = run("perplexity", chunks=1024).outputs
    ratio = outputs["mean_chunk_perplexity"] / outputs["perplexity"]
    assert 1.12 < ratio < 1.32
    one = run("perplexity", chunks=1).outputs
    assert one["mean_chunk_perplexity"] == pytest.approx(one["perplexity"], rel=1e-12)


def test_omitted_tokens_are_checked_against_the_budget() -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("perplexity").validate({"vocab": 131_072})  # tokens defaults to 8192
    assert caught.value.problems[0].message == (
        "tokens × vocab must be at most 2,097,152 to keep one request under 2 s, "
        "got 8192 × 131072: lower tokens to 16 or less"
    )


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("perplexity").validate({"tokens": 16, "chunks": 32})
    assert caught.value.problems[0].message == (
        "chunks must be at most the number of tokens (16), got 32"
    )
    response = client.post("/demos/perplexity", json={"vocab": 100_000, "tokens": 100})
    assert response.status_code == 422
    assert response.json()["detail"][0]["message"] == (
        "tokens × vocab must be at most 2,097,152 to keep one request under 2 s, "
        "got 100 × 100000: lower tokens to 20 or less"
    )
    response = client.post("/demos/perplexity", json={"temperature": 0})
    assert response.status_code == 422

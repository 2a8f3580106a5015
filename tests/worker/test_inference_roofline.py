"""inference_roofline against FLOPs and bytes counted by hand, and the other demos' counts.

References: a matmul of (m × k) by (k × n) is 2·m·n·k FLOPs and reads m·k + k·n values and
writes m·n; attention per head is 2·2·new·keys·head_dim FLOPs (q·Kᵀ and p·V). Llama 3 8B
(meta-llama/llama3 `Meta-Llama-3-8B-Instruct/params.json`: dim 4096, 32 layers, 32 heads,
8 KV heads, vocab 128256; intermediate 14336 from `ffn_dim_multiplier` 1.3 and `multiple_of`
1024) has 8,030,261,248 parameters (test_training_llama.py). Llama 3 70B (`Meta-Llama-3-70B/
params.json`: 80 layers, 8 KV heads, head_dim 8192 / 64 = 128) caches 327,680 bytes per token
in bf16 (kv_cache's checked figure). H100 SXM: 1,979 TFLOPS bf16 with sparsity (989.5 dense;
989 in modal.com's GPU Glossary table) and 3,350 GB/s.
"""

import pytest
from fastapi.testclient import TestClient

from tests.worker.conftest import SMALL, RunDemo

TINY = {
    "vocab": 64,
    "hidden": 32,
    "intermediate": 48,
    "layers": 3,
    "heads": 4,
    "kv_heads": 2,
}


def by_hand(batch: int, new: int, cached: int, bpv: float = 2.0) -> tuple[float, float]:
    """FLOPs and bytes of one forward pass of TINY, every matmul written out."""
    d, heads, kv, inter, layers, vocab = 32, 4, 2, 48, 3, 64
    hd, m = d // heads, batch * new
    keys = cached + new
    linears = [(m, d, heads * hd), (m, d, kv * hd), (m, d, kv * hd), (m, heads * hd, d)]
    linears += [(m, d, inter), (m, d, inter), (m, inter, d)]
    flops = sum(2 * a * b * c for a, b, c in linears)
    moved = sum(a * b + b * c + a * c for a, b, c in linears)
    flops += 2 * 2 * batch * heads * new * keys * hd  # q·Kᵀ and p·V
    moved += batch * (heads * new * hd + 2 * kv * keys * hd + heads * new * hd)  # q, K, V, out
    flops, moved = layers * flops, layers * moved
    flops += 2 * batch * d * vocab  # output head, last position of each sequence
    moved += batch * d + d * vocab + batch * vocab
    return flops, moved * bpv


@pytest.mark.parametrize(("batch", "context"), [(1, 1), (1, 7), (5, 16), (64, 3)])
def test_decode_matches_the_hand_count(run: RunDemo, batch: int, context: int) -> None:
    out = run("inference_roofline", **TINY, batch=batch, context=context).outputs
    flops, moved = by_hand(batch, 1, context)
    assert out["decode_flops"] == flops
    assert out["decode_bytes"] == moved
    assert out["decode_intensity"] == pytest.approx(flops / moved)


@pytest.mark.parametrize("context", [1, 9, 100])
@pytest.mark.parametrize("bpv", [0.5, 1.0, 2.0])
def test_prefill_matches_the_hand_count(run: RunDemo, context: int, bpv: float) -> None:
    out = run("inference_roofline", **TINY, context=context, bytes_per_value=bpv).outputs
    flops, moved = by_hand(1, context, 0, bpv)
    assert out["prefill_flops"] == flops
    assert out["prefill_bytes"] == moved


@pytest.mark.parametrize("params", [{}, {"context": 8192, "batch": 64}, TINY])
def test_theory_is_the_output(run: RunDemo, params: dict[str, int]) -> None:
    result = run("inference_roofline", **params)
    assert result.theory.keys() == {"prefill_flops", "decode_flops"}
    for name, value in result.theory.items():
        assert result.outputs[name] == value, name


def test_llama_3_8b_sizes_match_the_other_demos(run: RunDemo) -> None:
    out = run("inference_roofline").outputs
    assert out["params"] == 8_030_261_248
    params = run("llama_params", vocab=128_256, intermediate=14_336, kv_heads=8, seq_len=1)
    assert out["params"] == params.outputs["params"]
    assert out["weight_bytes"] == 2 * params.outputs["matmul_params"]
    kv = run("kv_cache", layers=32, query_heads=32, kv_heads=8, head_dim=128).outputs
    assert out["kv_bytes_per_token"] == kv["bytes_per_token"] == 131_072


def test_llama_3_70b_kv_bytes_per_token(run: RunDemo) -> None:
    out = run(
        "inference_roofline", hidden=8192, intermediate=28_672, layers=80, heads=64, kv_heads=8
    ).outputs
    assert out["kv_bytes_per_token"] == 327_680


def test_h100_ridge_point_and_regimes(run: RunDemo) -> None:
    out = run("inference_roofline").outputs
    assert out["ridge_point"] == pytest.approx(989.5e12 / 3.35e12)  # 295.4 FLOP/byte
    assert out["prefill_compute_bound"] == 1 and out["decode_compute_bound"] == 0
    # batch 1 in bf16: 2 FLOPs per 2-byte weight read, a little more for attention
    assert 1 <= out["decode_intensity"] < 1.1
    assert out["prefill_intensity"] > 3 * out["ridge_point"]
    assert out["prefill_attainable_tflops"] == pytest.approx(989.5)
    assert out["decode_attainable_tflops"] == pytest.approx(out["decode_intensity"] * 3.35)


def test_batch_1_ceiling_by_hand(run: RunDemo) -> None:
    out = run("inference_roofline", context=4096).outputs
    weights = 2 * 7_504_658_432  # matmul weights of Llama 3 8B in bf16
    assert out["weight_bytes"] == weights
    assert out["decode_ceiling_tokens_per_s"] == pytest.approx(3.35e12 / (weights + 131_072 * 4096))
    # the roofline rate at batch 1 is the ceiling, less the few bytes of activations
    assert out["decode_tokens_per_s"] == pytest.approx(out["decode_ceiling_tokens_per_s"], rel=1e-3)


def test_cost_per_million_tokens_by_hand(run: RunDemo) -> None:
    out = run("inference_roofline", batch=32, price_per_hour=3.0).outputs
    step = max(out["decode_flops"] / 989.5e12, out["decode_bytes"] / 3.35e12)
    assert out["decode_ms_per_step"] == pytest.approx(step * 1e3)
    assert out["prefill_ms"] == pytest.approx(out["prefill_flops"] / 989.5e12 * 1e3)
    assert out["decode_tokens_per_s"] == pytest.approx(32 / step)
    assert out["cost_per_million_tokens"] == pytest.approx(3.0 / (32 / step * 3600) * 1e6)


@pytest.mark.parametrize("device", ["h100_sxm", "a100_sxm_80gb", "h200_sxm"])
def test_ridge_batch_is_where_decode_crosses_the_ridge(run: RunDemo, device: str) -> None:
    # context 1: the KV cache is negligible, so batching raises intensity until it crosses
    out = run("inference_roofline", context=1, device=device).outputs
    b = int(out["ridge_batch"])
    assert b > 1
    at = run("inference_roofline", context=1, device=device, batch=b).outputs
    below = run("inference_roofline", context=1, device=device, batch=b - 1).outputs
    assert at["decode_intensity"] >= out["ridge_point"] > below["decode_intensity"]


def test_long_context_decode_never_reaches_the_ridge(run: RunDemo) -> None:
    # each sequence reads its own KV cache, so intensity saturates near the GQA group size
    out = run("inference_roofline", context=8192, batch=4096).outputs
    assert out["ridge_batch"] == 0 and out["decode_compute_bound"] == 0


def test_series_rise_with_batch(run: RunDemo) -> None:
    decode, ridge = run("inference_roofline", **SMALL["inference_roofline"]).series
    assert decode.y == sorted(decode.y)
    assert set(ridge.y) == {ridge.y[0]}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"batch": 0}, "batch"),
        ({"batch": 4097}, "batch"),
        ({"context": 131_073}, "context"),
        ({"device": "m3_max"}, "device"),
        ({"device": "l4"}, "device"),  # dropped: no reputable dense figure found
        ({"bytes_per_value": 0.25}, "bytes_per_value"),
        ({"price_per_hour": 0}, "price_per_hour"),
        ({"heads": 3}, "heads"),
        ({"kv_heads": 3}, "kv_heads"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/inference_roofline", json=body)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert [problem["param"] for problem in problems] == [param]
    assert problems[0]["message"]

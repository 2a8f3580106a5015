"""llama_params against published totals and the config arithmetic written out by hand.

References: keras-team/keras-hub ``llama_presets.py`` gives 6,738,415,616 parameters
for Llama 2 7B (converted from meta-llama/Llama-2-7b-hf: hidden 4096, intermediate
11008, 32 layers, 32 heads, vocab 32000, untied) and ``llama3_presets.py``
8,030,261,248 for Llama 3 8B (meta-llama/llama3 params.json: dim 4096, 32 layers,
32 heads, 8 KV heads, vocab 128256; FFN 14336 from model.py's multiple_of rule).
"""

import pytest
from fastapi.testclient import TestClient

from tests.worker.conftest import RunDemo

LLAMA_2_7B = {
    "vocab": 32_000,
    "hidden": 4096,
    "intermediate": 11_008,
    "layers": 32,
    "heads": 32,
    "kv_heads": 32,
}
LLAMA_3_8B = {
    "vocab": 128_256,
    "hidden": 4096,
    "intermediate": 14_336,
    "layers": 32,
    "heads": 32,
    "kv_heads": 8,
}


def ffn_width(dim: int, multiple_of: int, multiplier: float | None = None) -> int:
    """meta-llama's FeedForward: int(2 · 4d / 3), times the multiplier, rounded up."""
    hidden = int(2 * 4 * dim / 3)
    if multiplier is not None:
        hidden = int(multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def test_the_configs_intermediate_sizes_follow_metas_rule() -> None:
    assert ffn_width(4096, 256) == LLAMA_2_7B["intermediate"]
    assert ffn_width(4096, 1024, 1.3) == LLAMA_3_8B["intermediate"]


@pytest.mark.parametrize(
    ("config", "published"),
    [(LLAMA_2_7B, 6_738_415_616), (LLAMA_3_8B, 8_030_261_248)],
)
def test_reproduces_published_totals(run: RunDemo, config: dict[str, int], published: int) -> None:
    result = run("llama_params", **config)
    assert result.outputs["params"] == published
    assert result.theory["params"] == published


def test_llama_2_7b_by_parts(run: RunDemo) -> None:
    outputs = run("llama_params", **LLAMA_2_7B).outputs
    assert outputs["embedding_params"] == 32_000 * 4096 == 131_072_000
    assert outputs["head_params"] == 131_072_000  # untied
    assert outputs["attention_params"] == 4 * 4096 * 4096 == 67_108_864
    assert outputs["mlp_params"] == 3 * 4096 * 11_008 == 135_266_304
    assert outputs["layer_params"] == 67_108_864 + 135_266_304 + 2 * 4096 == 202_383_360
    assert outputs["norm_params"] == (2 * 32 + 1) * 4096
    assert outputs["bf16_gigabytes"] == pytest.approx(13.476831232)


def test_tying_removes_one_vocab_by_hidden_matrix(run: RunDemo) -> None:
    untied = run("llama_params", **LLAMA_2_7B).outputs["params"]
    tied = run("llama_params", **LLAMA_2_7B, tie_embeddings=True).outputs["params"]
    assert untied - tied == 32_000 * 4096


def test_gqa_shrinks_only_k_and_v(run: RunDemo) -> None:
    outputs = run("llama_params", **LLAMA_3_8B).outputs
    head_dim = 4096 // 32
    assert outputs["attention_params"] == 2 * 4096 * 4096 + 2 * 4096 * 8 * head_dim


def test_training_flops_are_six_per_matmul_weight_plus_attention(run: RunDemo) -> None:
    # PaLM Appendix B (as nanoGPT's estimate_mfu writes it): 6N + 12 · L · H · Q · T per token,
    # N the weights in matrix multiplies (the input embedding is a lookup, the head is not).
    outputs = run("llama_params", **LLAMA_2_7B, seq_len=4096).outputs
    matmul = 32 * (67_108_864 + 135_266_304) + 32_000 * 4096
    assert outputs["matmul_params"] == matmul == 6_607_077_376
    assert outputs["flops_per_token"] == 6 * matmul + 12 * 32 * 4096 * 4096 == 46_084_915_200
    assert outputs["six_n_flops_per_token"] == 6 * matmul


def test_attention_share_grows_with_the_sequence(run: RunDemo) -> None:
    short = run("llama_params", **LLAMA_2_7B, seq_len=1).outputs["attention_flops_share"]
    long = run("llama_params", **LLAMA_2_7B, seq_len=32_768).outputs["attention_flops_share"]
    assert short < 1e-4 < 0.5 < long


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"hidden": 4096, "heads": 3}, "heads"),
        ({"heads": 32, "kv_heads": 5}, "kv_heads"),
        ({"layers": 0}, "layers"),
        ({"vocab": 10**7}, "vocab"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/llama_params", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

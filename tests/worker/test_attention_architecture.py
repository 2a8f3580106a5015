"""architecture against config arithmetic, published parameter totals and a second loss formula.

References: DeepSeek-V3 technical report (arXiv:2412.19437, abstract: 671B total
parameters, 37B activated for each token); the Mixtral paper (arXiv:2401.04088,
abstract: 47B parameters, 13B active, rounded to whole billions);
deepseek-ai/DeepSeek-V3 ``inference/model.py`` (the absorbed MLA caches
``kv_cache`` of kv_lora_rank and ``pe_cache`` of qk_rope_head_dim per token per
layer); DeepSeek-V2 §2.1, Table 1 (arXiv:2405.04434: MHA caches 2·n_h·d_h per
token per layer); keras-hub presets (``llama2_7b_en`` 6,738,415,616;
``llama3_8b_en`` 8,030,261,248); Llama's ``FeedForward`` (11008 for dim 4096);
transformers' Mixtral ``load_balancing_loss_func`` (tokens_per_expert from a
one-hot of the top-k, which sums to top_k over experts, times num_experts).
"""

import pytest
import torch
import torch.nn.functional as F
from fastapi.testclient import TestClient

from app.demos.specs.attention_architecture import MODELS
from app.worker.demos.attention_architecture import balance_loss, llama_ffn_width
from tests.worker.conftest import RunDemo


def hand_count(name: str) -> tuple[int, int]:
    """Total and active parameters written out matrix by matrix from the config."""
    c = MODELS[name]
    if c.kv_lora_rank:
        qk = c.qk_nope_head_dim + c.qk_rope_head_dim
        attention = (
            c.hidden * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * c.heads * qk
            + c.hidden * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank
            + c.kv_lora_rank * c.heads * (c.qk_nope_head_dim + c.v_head_dim)
            + c.heads * c.v_head_dim * c.hidden
        )  # fmt: skip
    else:
        attention = 2 * c.hidden * c.heads * c.head_dim + 2 * c.hidden * c.kv_heads * c.head_dim
    expert = 3 * c.hidden * c.expert_intermediate
    gate = c.experts * c.hidden + (c.experts if c.gate_bias else 0)
    moe_layers = c.layers - c.dense_layers if c.experts else 0
    dense = attention + 2 * c.hidden + 3 * c.hidden * c.intermediate
    outer = c.vocab * c.hidden * (1 if c.tied else 2) + c.hidden
    base = outer + (c.layers - moe_layers) * dense + moe_layers * (attention + 2 * c.hidden + gate)
    total = base + moe_layers * (c.experts + c.shared_experts) * expert
    active = base + moe_layers * (c.experts_per_token + c.shared_experts) * expert
    return total, active


@pytest.mark.parametrize("name", list(MODELS))
def test_counts_match_the_config_by_hand(run: RunDemo, name: str) -> None:
    out = run("architecture", model=name, tokens=64).outputs
    assert (out["total_params"], out["active_params"]) == hand_count(name)


def test_published_totals(run: RunDemo) -> None:
    def billions(model: str) -> tuple[float, float]:
        out = run("architecture", model=model, tokens=64).outputs
        return out["total_billions"], out["active_billions"]

    assert billions("deepseek_v3") == pytest.approx((671, 37), abs=0.6)
    assert billions("mixtral_8x7b") == pytest.approx((47, 13), abs=0.5)
    assert run("architecture", model="llama_2_7b").outputs["total_params"] == 6_738_415_616
    assert run("architecture", model="llama_3_8b").outputs["total_params"] == 8_030_261_248


def test_mla_cache_is_the_latent_plus_the_rotary_key(run: RunDemo) -> None:
    out = run("architecture", model="deepseek_v3").outputs
    assert out["cache_per_token_layer"] == 512 + 64
    assert out["mha_cache_per_token_layer"] == 2 * 128 * 128
    assert out["cache_reduction_vs_mha"] == pytest.approx(32_768 / 576)
    assert out["cache_kib_per_token"] == 61 * 576 * 2 / 1024


@pytest.mark.parametrize(
    ("model", "cached", "mha"),
    [("llama_2_7b", 8192, 8192), ("llama_3_8b", 2048, 8192), ("mixtral_8x7b", 2048, 8192),
     ("gemma_7b", 8192, 8192)],
)  # fmt: skip
def test_gqa_cache_is_two_kv_heads_of_head_dim(
    run: RunDemo, model: str, cached: int, mha: int
) -> None:
    out = run("architecture", model=model).outputs
    assert (out["cache_per_token_layer"], out["mha_cache_per_token_layer"]) == (cached, mha)


def test_vocabulary_share(run: RunDemo) -> None:
    gemma = run("architecture", model="gemma_7b").outputs
    assert gemma["lm_head_params"] == 0  # tied
    assert gemma["embedding_params"] == 256_000 * 3072
    llama3 = run("architecture", model="llama_3_8b").outputs
    assert llama3["lm_head_params"] == llama3["embedding_params"] == 128_256 * 4096
    assert llama3["vocab_share"] == pytest.approx(2 * 128_256 * 4096 / 8_030_261_248)


def test_swiglu_width_as_llama_rounds_it(run: RunDemo) -> None:
    out = run("architecture", d_model=4096, multiple_of=256).outputs
    assert out["swiglu_hidden"] == 11_008
    assert out["swiglu_params"] == 3 * 4096 * 11_008
    assert out["gelu_mlp_params"] == 8 * 4096**2
    llama3 = run("architecture", d_model=4096, multiple_of=1024, ffn_dim_multiplier=1.3)
    assert llama3.outputs["swiglu_hidden"] == 14_336
    assert llama_ffn_width(5120, 256, 1.0) == 13_824  # int(2 · 20480 / 3) = 13653, up to 256s


def test_unrounded_two_thirds_gives_exact_parity(run: RunDemo) -> None:
    # d = 768: int(2 · 3072 / 3) = 2048 exactly, so 3 · d · 2048 = 8d².
    out = run("architecture", d_model=768, multiple_of=1).outputs
    assert out["swiglu_hidden"] == 2048
    assert out["swiglu_over_gelu"] == 1.0


def hf_style_loss(probs: torch.Tensor, top_k: int) -> float:
    """transformers' Mixtral formula: one-hot of the top-k, mean over tokens, times N."""
    experts = probs.shape[-1]
    mask = F.one_hot(probs.topk(top_k, dim=-1).indices, experts).double()
    tokens_per_expert = mask.mean(dim=0)  # (top_k, N): each row sums to 1
    return float((tokens_per_expert * probs.double().mean(dim=0)).sum() * experts / top_k)


@pytest.mark.parametrize(("experts", "top_k"), [(8, 1), (8, 2), (64, 8), (256, 8)])
def test_loss_matches_the_one_hot_formula(experts: int, top_k: int) -> None:
    generator = torch.Generator().manual_seed(experts + top_k)
    probs = (torch.randn(500, experts, generator=generator) * 2).softmax(dim=-1)
    assert balance_loss(probs, top_k)[0] == pytest.approx(hf_style_loss(probs, top_k), rel=1e-12)


def test_uniform_probabilities_give_one_whatever_the_dispatch() -> None:
    probs = torch.full((100, 8), 1 / 8)
    assert balance_loss(probs, 2)[0] == pytest.approx(1.0)


@pytest.mark.parametrize(("experts", "top_k", "tokens"), [(8, 1, 64), (8, 2, 100), (256, 8, 300)])
def test_balanced_router_gives_one(run: RunDemo, experts: int, top_k: int, tokens: int) -> None:
    out = run("architecture", experts=experts, top_k=top_k, tokens=tokens).outputs
    assert out["balance_loss_balanced"] == pytest.approx(1.0, abs=1e-6)  # fp32 softmax


def test_random_router_is_nearly_balanced(run: RunDemo) -> None:
    # 30 seeds at the defaults gave 1.0002 to 1.0028; 10 seeds at N = 64, k = 8, T = 1024
    # gave 1.0025 to 1.0038.
    for seed in range(3):
        assert 1.0 < run("architecture", seed=seed).outputs["balance_loss"] < 1.01


def test_skew_raises_the_loss_and_the_load(run: RunDemo) -> None:
    losses, loads = [], []
    for skew in (0.0, 1.0, 2.0, 4.0):
        out = run("architecture", router_skew=skew, tokens=2048).outputs
        losses.append(out["balance_loss"])
        loads.append(out["max_load"])
    assert losses == sorted(losses) and losses[-1] > 2
    assert loads == sorted(loads) and loads[-1] > 3.5  # expert 0 holds over 3.5/8 of dispatches


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "gpt_5"}, "model"),
        ({"experts": 4, "top_k": 5}, "top_k"),
        ({"tokens": 16_385}, "tokens"),
        ({"d_model": 7}, "d_model"),
        ({"router_skew": 11.0}, "router_skew"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/architecture", json=body)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert [problem["param"] for problem in problems] == [param]

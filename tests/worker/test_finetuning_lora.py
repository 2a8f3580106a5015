"""lora against hand counts, LoRA math written out separately, and known model sizes.

References: Hu et al. 2021 (arXiv:2106.09685) §4.1: h = W0x + BAx with B ∈ R^(d×r),
A ∈ R^(r×k), B = 0 at the start, BAx scaled by α/r, and W = W0 + BA can be stored
for inference; §5.1: |Θ| = 2 × L̂_LoRA × d_model × r for square projections.
peft's LoraLayer: scaling α/r, or α/√r with use_rslora. QLoRA (Dettmers et al. 2023,
arXiv:2305.14314) §3: blocks of 64 with fp32 constants cost 32/64 = 0.5 bits per
parameter; double quantization 8/64 + 32/(64 · 256) = 0.127. Llama-2-7B has
6,738,415,616 parameters (test_training_llama.py).
"""

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from torch import nn

from app.demos.specs.finetuning_lora import MODELS
from app.demos.specs.training_llama import LlamaParamsParams
from app.worker.demos.finetuning_lora import LoraLinear, nf4_bytes
from app.worker.demos.training_llama import closed_form
from tests.worker.conftest import RunDemo

LLAMA_2_7B = 6_738_415_616


@pytest.mark.parametrize(("d_in", "d_out", "rank"), [(1024, 1024, 8), (4096, 1024, 16), (7, 3, 3)])
def test_trainable_parameters_are_r_times_d_plus_k(
    run: RunDemo, d_in: int, d_out: int, rank: int
) -> None:
    out = run("lora", d_in=d_in, d_out=d_out, rank=rank, tokens=4, steps=1).outputs
    assert out["layer_params"] == d_in * d_out
    assert out["trainable_params"] == rank * (d_in + d_out)
    assert out["trainable_fraction"] == pytest.approx(rank * (d_in + d_out) / (d_in * d_out))


def test_zero_b_makes_the_adapted_layer_the_base_layer_exactly(run: RunDemo) -> None:
    for seed in range(5):
        assert run("lora", d_in=64, d_out=48, rank=4, seed=seed).outputs["init_max_abs_diff"] == 0


@pytest.mark.parametrize(("alpha", "rslora"), [(16.0, False), (1.0, False), (16.0, True)])
def test_merge_equals_the_adapter_path(run: RunDemo, alpha: float, rslora: bool) -> None:
    out = run("lora", d_in=128, d_out=96, rank=8, alpha=alpha, rslora=rslora, steps=10).outputs
    # Over seeds 0-29 for the three settings: merge differences at most 4.5e-15, adapter
    # outputs at least 0.13, the loss down by at least 0.08, the update's rank always 8.
    # The adapter really moved (a merge of B = 0 would be trivially exact) ...
    assert out["adapter_max_abs_output"] > 0.01
    assert out["loss_end"] < out["loss_start"]
    # ... and the merged nn.Linear computes the same map to float64 rounding.
    assert out["merge_max_abs_diff"] < 1e-12
    assert out["scaling"] == (alpha / math.sqrt(8) if rslora else alpha / 8)
    assert out["delta_rank"] == 8


def test_layer_matches_lora_written_out_in_numpy() -> None:
    # h = W0 x + (α/r) B A x (LoRA eq. 3 with the §4.1 scale), and W0 + (α/r) BA merged.
    torch.manual_seed(0)
    base = nn.Linear(20, 12, bias=False, dtype=torch.float64)
    layer = LoraLinear(base, rank=3, alpha=6.0)
    with torch.no_grad():
        layer.lora_B.weight.normal_()  # a trained-looking B
    w0 = base.weight.detach().numpy()
    a, b = layer.lora_A.weight.detach().numpy(), layer.lora_B.weight.detach().numpy()
    x = np.random.default_rng(0).standard_normal((5, 20))
    expected = x @ w0.T + 2.0 * (x @ a.T) @ b.T
    with torch.no_grad():
        got = layer(torch.from_numpy(x)).numpy()
        merged = layer.merged().weight.numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(merged, w0 + 2.0 * b @ a, rtol=0, atol=1e-12)
    assert a.shape == (3, 20) and b.shape == (12, 3)


def test_a_merge_without_the_scale_would_be_caught(run: RunDemo) -> None:
    # The merge check can fail: W + BA instead of W + (α/r)BA differs by (α/r − 1)·BAx.
    torch.manual_seed(0)
    layer = LoraLinear(nn.Linear(16, 16, bias=False, dtype=torch.float64), rank=2, alpha=8.0)
    with torch.no_grad():
        layer.lora_B.weight.normal_()
        x = torch.randn(4, 16, dtype=torch.float64)
        wrong = x @ (layer.base_layer.weight + layer.lora_B.weight @ layer.lora_A.weight).T
        assert (wrong - layer(x)).abs().max() > 0.1


def test_llama_2_7b_lora_on_q_and_v_by_hand(run: RunDemo) -> None:
    # LoRA §5.1: |Θ| = 2 × L̂ × d_model × r, L̂ = 2 projections × 32 layers.
    out = run("lora", rank=8, model="llama2_7b", targets="q_v").outputs
    assert out["model_params"] == LLAMA_2_7B
    assert out["model_lora_params"] == 2 * (2 * 32) * 4096 * 8 == 4_194_304
    assert out["adapter_file_mb"] == pytest.approx(8.388608)


def test_llama_3_1_8b_all_linear_by_hand(run: RunDemo) -> None:
    # GQA: k and v project 4096 → 8 × 128 = 1024; the MLP is 4096 ↔ 14336.
    per_layer = 16 * ((4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14_336) * 3)
    out = run("lora", rank=16, model="llama3_1_8b", targets="all_linear").outputs
    assert out["model_lora_params"] == 32 * per_layer == 41_943_040
    assert out["model_params"] == 8_030_261_248


@pytest.mark.parametrize("name", list(MODELS))
def test_model_counts_are_llama_params_closed_form(run: RunDemo, name: str) -> None:
    out = run("lora", model=name).outputs
    assert out["model_params"] == closed_form(LlamaParamsParams(**MODELS[name]))["params"]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dim", "multiple_of", "expected"), [(4096, 1024, 14_336), (8192, 4096, 28_672)]
)
def test_llama_3_1_mlp_width_follows_the_reference_feedforward(
    dim: int, multiple_of: int, expected: int
) -> None:
    # models/llama3/reference_impl FeedForward(hidden_dim=4 * dim), ffn_dim_multiplier 1.3
    hidden = int(1.3 * int(2 * 4 * dim / 3))
    assert multiple_of * ((hidden + multiple_of - 1) // multiple_of) == expected


def test_nf4_with_double_quantization_costs_0_127_extra_bits(run: RunDemo) -> None:
    out = run("lora", model="llama3_1_70b", targets="all_linear").outputs
    assert out["nf4_single_quant_bits_per_param"] == pytest.approx(4.5)
    assert out["nf4_bits_per_param"] == pytest.approx(4.127, abs=5e-4)
    # 0.373 bits per quantized parameter, in GB
    assert out["double_quant_saving_gb"] == pytest.approx(
        0.373 * out["quantized_params"] / 8 / 1e9, rel=2e-3
    )
    # bf16 is 16 bits per parameter: the quantized base is close to a quarter of it
    assert 0.25 < out["qlora_base_gb"] / out["bf16_base_gb"] < 0.3


def test_nf4_bytes_by_hand() -> None:
    # 4096 × 4096: 8 MiB of codes, 262,144 one-byte constants, 1024 fp32 constants, one mean
    assert nf4_bytes(4096 * 4096) == 8_388_608 + 262_144 + 4096 + 4
    assert nf4_bytes(4096 * 4096, double_quant=False) == 8_388_608 + 4 * 262_144


def test_memory_ordering_full_lora_qlora(run: RunDemo) -> None:
    out = run("lora", model="llama2_7b", targets="all_linear", rank=16).outputs
    assert out["full_finetune_state_gb"] == pytest.approx(16 * LLAMA_2_7B / 1e9)
    assert out["bf16_base_gb"] == pytest.approx(2 * LLAMA_2_7B / 1e9)
    assert out["adapter_train_state_gb"] == pytest.approx(12 * out["model_lora_params"] / 1e9)
    assert out["qlora_base_gb"] < out["bf16_base_gb"] < out["full_finetune_state_gb"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"d_in": 4096, "d_out": 4096}, "d_out"),
        ({"d_in": 4, "d_out": 8, "rank": 5}, "rank"),
        ({"d_in": 1024, "d_out": 1024, "tokens": 1024, "steps": 100}, "steps"),
        ({"model": "llama2_70b"}, "model"),
        ({"targets": "mlp"}, "targets"),
        ({"alpha": 0}, "alpha"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/lora", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]


def test_budget_message_says_what_to_lower(client: TestClient) -> None:
    response = client.post(
        "/demos/lora", json={"d_in": 1024, "d_out": 1024, "tokens": 1024, "steps": 100}
    )
    assert "lower steps to 1 or less" in response.json()["detail"][0]["message"]

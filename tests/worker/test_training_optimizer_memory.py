"""optimizer_memory against hand counts: ZeRO's 16 bytes per parameter and torch.optim's state.

References, all independent of the demo's code: Rajbhandari et al. 2020 (ZeRO), §3.1:
mixed-precision Adam keeps fp16 weights (2Ψ) and gradients (2Ψ) plus an fp32 copy,
momentum and variance (KΨ, K = 12), 16Ψ bytes in all. torch/optim/adam.py creates
``exp_avg`` and ``exp_avg_sq`` as ``zeros_like(param)`` (AdamW subclasses Adam), adds
``max_exp_avg_sq`` for amsgrad, and SGD keeps one ``momentum_buffer`` when momentum ≠ 0.
"""

import pytest
from fastapi.testclient import TestClient

from tests.worker.conftest import RunDemo

# Each parameter tensor also gets a 4-byte step counter: 4 tensors over ≥ 33,000 parameters.
STEP_COUNTERS = 1e-3


def test_mixed_precision_adamw_is_zeros_sixteen_bytes(run: RunDemo) -> None:
    outputs = run("optimizer_memory", optimizer="adamw", precision="mixed").outputs
    assert outputs["weight_bytes_per_param"] == 2  # bf16 working weights: 2Ψ
    assert outputs["grad_bytes_per_param"] == 2  # bf16 gradients: 2Ψ
    assert outputs["master_bytes_per_param"] == 4  # fp32 copy
    assert outputs["optimizer_bytes_per_param"] == pytest.approx(8, abs=STEP_COUNTERS)
    assert outputs["total_bytes_per_param"] == pytest.approx(2 + 2 + 12, abs=STEP_COUNTERS)


def test_seven_billion_parameters_need_112_gb_before_activations(run: RunDemo) -> None:
    outputs = run("optimizer_memory", billions=7.0).outputs
    assert outputs["total_gb"] == pytest.approx(16 * 7e9 / 1e9, rel=1e-4)
    assert outputs["optimizer_gb"] == pytest.approx(8 * 7e9 / 1e9, rel=1e-4)


def test_llama_2_7b_in_gib(run: RunDemo) -> None:
    # 6,738,415,616 parameters × 16 B = 107,814,649,856 B = 100.41 GiB.
    outputs = run("optimizer_memory", billions=6.738415616).outputs
    assert outputs["total_gib"] == pytest.approx(107_814_649_856 / 2**30, rel=1e-4)


def test_zero_papers_example_of_7_5_billion_parameters(run: RunDemo) -> None:
    # ZeRO, Figure 1: Ψ = 7.5B with K = 12 gives (2 + 2 + K)Ψ = 120 GB per GPU.
    assert run("optimizer_memory", billions=7.5).outputs["total_gb"] == pytest.approx(120, rel=1e-4)


@pytest.mark.parametrize(
    ("optimizer", "fp32_copies"),
    [("sgd", 0), ("sgd_momentum", 1), ("adam", 2), ("adamw", 2), ("adamw_amsgrad", 3)],
)
@pytest.mark.parametrize(("precision", "element"), [("fp32", 4), ("mixed", 4), ("bf16", 2)])
def test_state_is_copies_of_the_parameters_in_their_dtype(
    run: RunDemo, optimizer: str, fp32_copies: int, precision: str, element: int
) -> None:
    outputs = run("optimizer_memory", optimizer=optimizer, precision=precision).outputs
    assert outputs["optimizer_bytes_per_param"] == pytest.approx(
        fp32_copies * element, abs=STEP_COUNTERS
    )


def test_fp32_training_also_totals_sixteen_bytes_with_adam(run: RunDemo) -> None:
    # 4 (weights) + 4 (gradients) + 8 (moments): same total, no separate master copy.
    outputs = run("optimizer_memory", precision="fp32").outputs
    assert outputs["master_bytes_per_param"] == 0
    assert outputs["total_bytes_per_param"] == pytest.approx(16, abs=STEP_COUNTERS)


def test_pure_bf16_halves_everything(run: RunDemo) -> None:
    outputs = run("optimizer_memory", precision="bf16").outputs
    assert outputs["total_bytes_per_param"] == pytest.approx(2 + 2 + 4, abs=STEP_COUNTERS)


def test_adafactor_keeps_a_row_and_a_column_per_matrix(run: RunDemo) -> None:
    # width 128: Linear(128, 512) weight + bias, Linear(512, 128) weight + bias, LayerNorm(128).
    w = 128
    params = (w * 4 * w + 4 * w) + (4 * w * w + w) + 2 * w
    state = (4 * w + w) + 4 * w + (w + 4 * w) + w + 2 * w  # row + col per matrix, vectors whole
    outputs = run("optimizer_memory", optimizer="adafactor", precision="fp32", width=w).outputs
    assert outputs["small_model_params"] == params
    assert outputs["optimizer_bytes_per_param"] == pytest.approx(
        4 * state / params, abs=STEP_COUNTERS
    )


def test_theory_stands_beside_each_measurement(run: RunDemo) -> None:
    result = run("optimizer_memory")
    for name in ("weight_bytes_per_param", "optimizer_bytes_per_param", "total_gb"):
        assert result.outputs[name] == pytest.approx(result.theory[name], rel=1e-3)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"optimizer": "lion"}, "optimizer"),
        ({"precision": "fp8"}, "precision"),
        ({"billions": 0}, "billions"),
        ({"width": 4096}, "width"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/optimizer_memory", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

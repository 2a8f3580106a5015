"""zero_memory against ZeRO's Figure 1 and §5 numbers, and sums worked by hand.

Reference: Rajbhandari et al. 2019, arXiv:1910.02054, §3.1 (2Ψ + 2Ψ + KΨ, K = 12),
§5.1–5.3 and Figure 1: Ψ = 7.5B on N_d = 64 needs 120 GB per GPU under plain data
parallelism, 31.4 GB with P_os (4Ψ + KΨ/N_d), 16.6 GB with P_os+g (2Ψ + 14Ψ/N_d) and
1.9 GB with P_os+g+p (16Ψ/N_d). Llama 2 7B has 6,738,415,616 parameters (see
test_training_llama.py).
"""

import pytest
from fastapi.testclient import TestClient

from app.demos.specs.training_llama import LlamaParamsParams
from app.worker.demos.distributed_zero import formula_bytes
from app.worker.demos.training_llama import closed_form
from tests.worker.conftest import SMALL, RunDemo

LLAMA_2_7B = 6_738_415_616


def test_paper_figure_1(run: RunDemo) -> None:
    out = run("zero_memory").outputs
    assert out["paper_dp_gb"] == pytest.approx(120)
    assert out["paper_stage1_gb"] == pytest.approx(31.4, abs=0.05)
    assert out["paper_stage2_gb"] == pytest.approx(16.6, abs=0.05)
    assert out["paper_stage3_gb"] == pytest.approx(1.9, abs=0.05)


def test_llama_2_7b_stage_1_on_8_gpus_by_hand(run: RunDemo) -> None:
    # Ψ is a multiple of 8: (2 + 2)Ψ + 12Ψ/8 = 5.5Ψ bytes, no padding.
    out = run("zero_memory", gpus=8, stage=1).outputs
    assert out["params"] == LLAMA_2_7B
    assert out["shard_params"] == LLAMA_2_7B // 8 == 842_301_952
    assert out["weight_bytes"] == out["gradient_bytes"] == 13_476_831_232
    assert out["optimizer_state_bytes"] == 12 * 842_301_952
    assert out["total_bytes"] == 37_061_285_888
    assert out["bytes_per_param"] == 5.5
    assert out["reduction_vs_dp"] == pytest.approx(16 / 5.5)
    assert out["checkpoint_weights_gb"] == pytest.approx(13.476831232)
    assert out["checkpoint_full_gb"] == pytest.approx(94.337818624)  # 14Ψ


def test_uneven_shards_are_padded(run: RunDemo) -> None:
    # 7 GPUs do not divide Llama 2 7B's Ψ: each rank holds ceil(Ψ / 7) elements.
    out = run("zero_memory", gpus=7, stage=3, optimizer_bytes=12).outputs
    shard = -(-LLAMA_2_7B // 7)
    assert LLAMA_2_7B % 7 and out["shard_params"] == shard
    assert out["total_bytes"] == 16 * shard
    assert 0 < out["total_bytes"] - 16 * LLAMA_2_7B / 7 < 16


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
@pytest.mark.parametrize("gpus", [1, 8, 64, 1000, 65_536])
@pytest.mark.parametrize("k", [0, 8, 12])
def test_matches_the_formulas(run: RunDemo, stage: int, gpus: int, k: int) -> None:
    result = run("zero_memory", gpus=gpus, stage=stage, optimizer_bytes=k)
    psi = result.outputs["params"]
    expected = formula_bytes(psi, gpus, stage, k)
    assert result.outputs["weight_bytes"] == pytest.approx(expected["weights"], abs=2 * gpus)
    assert result.outputs["gradient_bytes"] == pytest.approx(expected["gradients"], abs=2 * gpus)
    assert result.outputs["optimizer_state_bytes"] == pytest.approx(
        expected["optimizer"], abs=k * gpus
    )
    assert result.outputs["shard_params"] == pytest.approx(psi / gpus, abs=1)
    for name, value in result.theory.items():  # padding: under N elements in Ψ ≈ 6.7e9
        assert result.outputs[name] == pytest.approx(value, rel=1e-4), name


def test_param_count_is_the_closed_form(run: RunDemo) -> None:
    config = {k: v for k, v in SMALL["zero_memory"].items() if k != "gpus"}
    out = run("zero_memory", **config, tie_embeddings=True).outputs
    expected = closed_form(LlamaParamsParams(**config, tie_embeddings=True))
    assert out["params"] == expected["params"]


def test_series_shrink_with_stage_and_gpus(run: RunDemo) -> None:
    bars, *lines = run("zero_memory").series
    assert bars.y == sorted(bars.y, reverse=True)
    assert [line.y[0] for line in lines] == pytest.approx([bars.y[0]] * 4, rel=1e-3)
    assert lines[0].y[0] == lines[0].y[-1]  # plain data parallelism: N does not help


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"gpus": 0}, "gpus"),
        ({"gpus": 65_537}, "gpus"),
        ({"stage": 4}, "stage"),
        ({"stage": "2"}, "stage"),
        ({"optimizer_bytes": 33}, "optimizer_bytes"),
        ({"heads": 3}, "heads"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/zero_memory", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

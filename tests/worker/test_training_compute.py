"""training_compute against 6ND worked by hand and Llama 2 7B's reported GPU-hours.

References: Kaplan et al. 2020, §2.1 (C ≈ 6N per training token); meta-llama/llama
MODEL_CARD.md (Llama 2 7B: 2.0T tokens, 184,320 A100-80GB GPU-hours); A100 dense bf16
peak 312 TFLOP/s (NVIDIA A100 datasheet).
"""

import pytest
from fastapi.testclient import TestClient

from tests.worker.conftest import RunDemo


def test_small_numbers_by_hand(run: RunDemo) -> None:
    # 6 × 1e9 × 1e9 = 6e18 FLOPs; at 100 TFLOP/s × 0.5 = 5e13 FLOP/s that is 120,000 s.
    outputs = run(
        "training_compute", params_billions=1, tokens_billions=1, gpus=1, peak_tflops=100, mfu=0.5
    ).outputs
    assert outputs["flops"] == 6e18
    assert outputs["flops_per_token"] == 6e9
    assert outputs["gpu_hours"] == pytest.approx(120_000 / 3600)
    assert outputs["days"] == pytest.approx(120_000 / 86_400)
    assert outputs["tokens_per_gpu_second"] == pytest.approx(1e9 / 120_000)


def test_llama_2_7b(run: RunDemo) -> None:
    outputs = run(
        "training_compute", params_billions=6.738415616, tokens_billions=2000, gpu_hours=184_320
    ).outputs
    assert outputs["flops"] == pytest.approx(6 * 6_738_415_616 * 2e12) == 8.0860987392e22
    # 8.086e22 / (184,320 h × 3600 s × 312e12 FLOP/s)
    assert outputs["implied_mfu"] == pytest.approx(8.0860987392e22 / (184_320 * 3600 * 312e12))
    assert outputs["implied_mfu"] == pytest.approx(0.3906, abs=1e-4)


def test_days_fall_with_gpus(run: RunDemo) -> None:
    one = run("training_compute", gpus=1).outputs["days"]
    many = run("training_compute", gpus=1024).outputs["days"]
    assert one == pytest.approx(1024 * many)


def test_no_implied_mfu_without_reported_hours(run: RunDemo) -> None:
    assert "implied_mfu" not in run("training_compute").outputs


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"mfu": 0}, "mfu"),
        ({"mfu": 1.5}, "mfu"),
        ({"gpus": 0}, "gpus"),
        ({"gpu_hours": -1}, "gpu_hours"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/training_compute", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

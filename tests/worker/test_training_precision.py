"""loss_scaling against the IEEE half and bfloat16 formats and closed-form gradients.

References: fp16 has 5 exponent and 10 fraction bits, so its largest value is
(2 − 2⁻¹⁰)·2¹⁵ = 65504, its smallest normal 2⁻¹⁴ and smallest subnormal 2⁻²⁴; bf16 has
8 exponent and 7 fraction bits (smallest normal 2⁻¹²⁶, eps 2⁻⁷). The gradient of a
cross-entropy summed over tokens and divided by M is (softmax(z) − onehot) / M, so
equal logits give (1/V)/M for every non-target entry and (1/V − 1)/M for the target.
"""

import math

import pytest
import torch
from fastapi.testclient import TestClient

from tests.worker.conftest import RunDemo


def test_format_limits(run: RunDemo) -> None:
    outputs = run("loss_scaling").outputs
    assert outputs["fp16_max"] == (2 - 2**-10) * 2**15 == 65504
    assert outputs["fp16_smallest_normal"] == 2**-14
    assert outputs["fp16_smallest_subnormal"] == 2**-24
    assert outputs["fp16_eps"] == 2**-10
    assert outputs["bf16_max"] == pytest.approx((2 - 2**-7) * 2**127)
    assert outputs["bf16_smallest_normal"] == 2**-126
    assert outputs["bf16_eps"] == 2**-7


def test_the_rounding_thresholds_the_demo_relies_on() -> None:
    half = torch.tensor([2**-25, 2**-25 * 1.001, 65519.0, 65520.0]).to(torch.float16)
    assert half.tolist() == [0.0, 2**-24, 65504.0, math.inf]


def test_equal_logits_flush_every_non_target_gradient(run: RunDemo) -> None:
    # (1/32000)/4096 = 7.6e-9 ≤ 2⁻²⁵ = 3.0e-8: all V − 1 non-target entries become 0.
    outputs = run("loss_scaling", logit_std=0.0, vocab=32_000, mean_over=4096).outputs
    assert outputs["fp16_zero_share"] == pytest.approx(31_999 / 32_000)
    assert outputs["median_gradient"] == pytest.approx(1 / (32_000 * 4096), rel=1e-4)
    assert outputs["fp16_zero_share_scaled"] == 0  # × 2¹⁶: 5.0e-4, a normal fp16 number
    assert outputs["bf16_zero_share"] == 0


def test_a_smaller_mean_keeps_them_as_subnormals(run: RunDemo) -> None:
    # (1/32000)/64 = 4.9e-7: above 2⁻²⁵, below 2⁻¹⁴, so subnormal, not zero.
    outputs = run("loss_scaling", logit_std=0.0, mean_over=64).outputs
    assert outputs["fp16_zero_share"] == 0
    assert outputs["fp16_subnormal_share"] == pytest.approx(31_999 / 32_000)


def test_too_large_a_scale_overflows_the_target_gradient(run: RunDemo) -> None:
    # One token, M = 1: the target's gradient is 1/V − 1 ≈ −1; × 2¹⁷ is beyond 65504.
    outputs = run("loss_scaling", logit_std=0.0, tokens=1, mean_over=1, loss_scale=2.0**17).outputs
    assert outputs["fp16_inf_share_scaled"] == pytest.approx(1 / 32_000)
    assert outputs["largest_gradient_scaled"] == pytest.approx(2**17 * (1 - 1 / 32_000))


def test_measured_shares_follow_the_gaussian_prediction(run: RunDemo) -> None:
    result = run("loss_scaling")  # σ = 1, V = 32000, M = 4096, S = 2¹⁶
    # Over 20 seeds fp16_zero_share ranged 0.9685–0.9689.
    assert result.outputs["fp16_zero_share"] == pytest.approx(0.9687, abs=0.002)
    assert result.theory["fp16_zero_share"] == pytest.approx(
        result.outputs["fp16_zero_share"], abs=0.002
    )
    assert result.outputs["fp16_zero_share_scaled"] == 0
    assert result.outputs["median_gradient"] == pytest.approx(
        result.theory["median_gradient"], rel=0.01
    )


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"vocab": 262_144, "tokens": 64}, "tokens"),
        ({"tokens": 64, "mean_over": 10}, "mean_over"),
        ({"loss_scale": 0.5}, "loss_scale"),
        ({"logit_std": -1}, "logit_std"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/loss_scaling", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

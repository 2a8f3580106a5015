"""adam_decay against a hand-written Adam and the closed forms of the bias correction.

References, independent of the demo's code: Loshchilov & Hutter, arXiv:1711.05101,
§2 and Algorithm 2 (Adam + L2 adds λθ to the gradient, inside the moments; AdamW
decays the weight outside them; PyTorch multiplies that decay by lr:
``param.mul_(1 - lr * weight_decay)`` in torch/optim/adam.py). Kingma & Ba,
arXiv:1412.6980, Algorithm 1 and §3: with m₀ = v₀ = 0 and a constant gradient g,
m_t = g(1 − β₁ᵗ) and v_t = g²(1 − β₂ᵗ), so the uncorrected m_t / sqrt(v_t) is
sign(g)(1 − β₁ᵗ) / sqrt(1 − β₂ᵗ) and the corrected one sign(g).
"""

import math

import pytest
import torch
from fastapi.testclient import TestClient

from tests.worker.conftest import RunDemo


def hand_adam(
    grads: list[float], *, lr: float, wd: float, decoupled: bool, b1: float, b2: float, eps: float
) -> float:
    """Algorithm 2 of Loshchilov & Hutter for one weight starting at 1, in plain floats."""
    theta, m, v = 1.0, 0.0, 0.0
    for t, loss_grad in enumerate(grads, start=1):
        g = loss_grad
        if decoupled:
            theta *= 1 - lr * wd  # PyTorch's AdamW: decay scaled by lr, before the Adam step
        else:
            g = loss_grad + wd * theta  # L2: the penalty's gradient joins the loss gradient
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        theta -= lr * (m / (1 - b1**t)) / (math.sqrt(v / (1 - b2**t)) + eps)
    return theta


@pytest.mark.parametrize(
    "params",
    [
        {"steps": 200},
        {"steps": 150, "lr": 0.003, "weight_decay": 0.5, "beta1": 0.5, "beta2": 0.9, "seed": 3},
        {"steps": 100, "small_grad": 0.0, "large_grad": 50.0, "eps": 1e-3},
    ],
)
def test_every_run_matches_a_hand_written_adam(run: RunDemo, params: dict[str, float]) -> None:
    result = run("adam_decay", **params)
    p = result.params
    # The demo's noise: fp32 N(0, 1) draws from a CPU generator seeded with the seed.
    noise = torch.randn(int(p["steps"]), generator=torch.Generator().manual_seed(int(p["seed"])))
    common = {"lr": p["lr"], "b1": p["beta1"], "b2": p["beta2"], "eps": p["eps"]}
    for name, scale in (("small", p["small_grad"]), ("unit", 1.0), ("large", p["large_grad"])):
        grads = [float(scale) * x for x in noise.double().tolist()]
        expected = {
            "none": hand_adam(grads, wd=0.0, decoupled=False, **common),
            "l2": hand_adam(grads, wd=p["weight_decay"], decoupled=False, **common),
            "adamw": hand_adam(grads, wd=p["weight_decay"], decoupled=True, **common),
        }
        for run_name, value in expected.items():
            measured = result.outputs[f"final_{run_name}_{name}"]
            assert measured == pytest.approx(value, rel=1e-9, abs=1e-12), (run_name, name)


@pytest.mark.parametrize(("lr", "wd"), [(0.01, 0.1), (3e-4, 0.1), (1e-3, 1e-4), (0.05, 0.9)])
def test_adamw_removes_lr_times_lambda_of_every_weight(run: RunDemo, lr: float, wd: float) -> None:
    outputs = run("adam_decay", steps=300, lr=lr, weight_decay=wd).outputs
    for name in ("small", "unit", "large"):
        assert outputs[f"adamw_shrink_{name}"] == pytest.approx(lr * wd, rel=1e-6)


@pytest.mark.parametrize("wd", [1e-4, 0.1])
def test_adam_l2_moves_a_gradient_free_weight_by_lr_whatever_lambda(
    run: RunDemo, wd: float
) -> None:
    # One step, no loss gradient: g = λθ, so m̂/sqrt(v̂) = λ/(λ + ε) ≈ 1 and the step is lr.
    outputs = run("adam_decay", steps=1, lr=1e-3, weight_decay=wd, small_grad=0.0).outputs
    assert outputs["l2_shrink_small"] == pytest.approx(1e-3 * wd / (wd + 1e-8), rel=1e-9)
    assert outputs["adamw_shrink_small"] == pytest.approx(1e-3 * wd, rel=1e-6)


def test_adam_l2_barely_decays_the_large_gradient_weight(run: RunDemo) -> None:
    result = run("adam_decay")  # lr 0.01, λ 0.1, gradient scales 1e-3, 1 and 1e3
    outputs, lr_wd = result.outputs, 0.01 * 0.1
    # sqrt(v̂) ≈ the gradient scale when the loss gradient dominates λθ.
    assert outputs["l2_shrink_large"] == pytest.approx(lr_wd / 1000, rel=0.05)
    assert outputs["l2_shrink_unit"] == pytest.approx(lr_wd, rel=0.05)
    assert outputs["l2_shrink_small"] > 10 * lr_wd
    for name in ("unit", "large"):
        key = f"l2_shrink_{name}"
        assert outputs[key] == pytest.approx(result.theory[key], rel=0.03)


def test_the_cards_three_weights(run: RunDemo) -> None:
    # content/training/adamw-vs-adam-l2.md: 1,000 steps at lr 0.01, λ 0.1, same noise as
    # torch.manual_seed(0); torch.randn(1000).
    outputs = run("adam_decay").outputs
    for name in ("small", "unit", "large"):
        # Without decay Adam ignores a per-weight gradient scale (ε aside).
        assert outputs[f"final_none_{name}"] == pytest.approx(0.736, abs=0.002)
        assert outputs[f"final_adamw_{name}"] == pytest.approx(0.268, abs=0.002)
    assert outputs["final_l2_unit"] == pytest.approx(0.268, abs=0.002)
    assert outputs["final_l2_large"] == pytest.approx(0.736, abs=0.002)
    assert abs(outputs["final_l2_small"]) < 0.01


def test_moments_follow_the_closed_forms(run: RunDemo) -> None:
    result = run("adam_decay", steps=1000)
    outputs = result.outputs
    assert outputs["exp_avg_first"] == pytest.approx(0.1, rel=1e-12)
    assert outputs["exp_avg_sq_first"] == pytest.approx(0.001, rel=1e-12)
    assert outputs["exp_avg_last"] == pytest.approx(1 - 0.9**1000, rel=1e-12)
    assert outputs["exp_avg_sq_last"] == pytest.approx(1 - 0.999**1000, rel=1e-12)
    assert outputs["exp_avg_sq_last"] == pytest.approx(0.6323, abs=1e-4)
    assert outputs["exp_avg_settled_step"] == 44  # 1 − 0.9^t > 0.99 from t = 44
    assert "exp_avg_sq_settled_step" not in outputs  # 1 − 0.999^t reaches 0.99 at t = 4603
    for name, value in result.theory.items():
        if name.startswith(("exp_avg", "uncorrected", "update")):
            assert outputs[name] == pytest.approx(value, rel=1e-9), name


def test_without_correction_the_steps_are_too_large(run: RunDemo) -> None:
    outputs = run("adam_decay", steps=1000).outputs
    ratio = [(1 - 0.9**t) / math.sqrt(1 - 0.999**t) for t in range(1, 1001)]
    assert outputs["uncorrected_ratio_first"] == pytest.approx(0.1 / math.sqrt(0.001), rel=1e-12)
    assert outputs["uncorrected_ratio_first"] == pytest.approx(3.162, abs=1e-3)
    assert outputs["uncorrected_ratio_peak"] == pytest.approx(max(ratio), rel=1e-12)
    assert outputs["uncorrected_ratio_peak"] == pytest.approx(6.57, abs=0.01)
    assert outputs["uncorrected_peak_step"] == 12
    assert outputs["uncorrected_ratio_last"] == pytest.approx(1.258, abs=1e-3)
    assert "uncorrected_settled_step" not in outputs
    # With the correction the ratio is sign(g) from step 1, and the step is lr·g/(|g| + ε).
    assert outputs["corrected_ratio_max_deviation"] < 1e-12
    assert outputs["update_over_lr_first"] == pytest.approx(0.01 / (0.01 + 1e-8), rel=1e-12)
    assert outputs["update_over_lr_last"] == pytest.approx(0.01 / (0.01 + 1e-8), rel=1e-9)


def test_the_second_moment_settles_only_after_thousands_of_steps(run: RunDemo) -> None:
    outputs = run("adam_decay", steps=5000).outputs
    assert outputs["exp_avg_sq_settled_step"] == 4603  # ln 0.01 / ln 0.999 = 4602.8
    assert outputs["uncorrected_settled_step"] == 3925
    assert outputs["uncorrected_ratio_last"] == pytest.approx(1.003, abs=1e-3)


def test_a_negative_gradient_flips_the_update_only(run: RunDemo) -> None:
    outputs = run("adam_decay", steps=20, constant_grad=-2.0).outputs
    assert outputs["uncorrected_ratio_first"] == pytest.approx(3.1623, abs=1e-4)
    assert outputs["update_over_lr_first"] == pytest.approx(-2 / (2 + 1e-8), rel=1e-12)


def test_no_decay_means_no_shrink(run: RunDemo) -> None:
    outputs = run("adam_decay", steps=50, weight_decay=0.0).outputs
    for run_name in ("l2", "adamw"):
        for name in ("small", "unit", "large"):
            assert outputs[f"{run_name}_shrink_{name}"] == 0
            assert outputs[f"final_{run_name}_{name}"] == outputs[f"final_none_{name}"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"constant_grad": 0.0}, "constant_grad"),
        ({"constant_grad": 1e-9}, "constant_grad"),
        ({"steps": 5001}, "steps"),
        ({"beta2": 1.0}, "beta2"),
        ({"eps": 0.0}, "eps"),
        ({"lr": 2.0}, "lr"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/adam_decay", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

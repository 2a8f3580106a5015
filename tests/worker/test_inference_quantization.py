"""weight_quantization against hand-written NumPy quantisers, the FP8 bit layouts and torch.finfo.

References:
- Round-to-nearest quantisers written again in NumPy: symmetric absmax (SmoothQuant's
  ``fake_quant.py``: ``s = max|w| / (2^(b−1) − 1)``, ``round(w / s) · s``) per tensor, per
  row and per group, and asymmetric per group (llm-awq's ``pseudo_quantize_tensor``:
  ``s = (max − min) / (2^b − 1)``, ``z = −round(min / s)``), fp16 scales.
- SmoothQuant's ``smooth.py``: s_j = max|X_j|^α / max|W_j|^(1−α) with the weight maximum
  over output rows; X·Wᵀ = (X diag(s)⁻¹)(W diag(s))ᵀ exactly in real arithmetic.
- FP8 values built from the bit layouts of Micikevicius et al. 2022 (arXiv:2209.05433):
  E4M3 with bias 7, no infinities and only S.1111.111 as NaN; E5M2 with bias 15 and IEEE
  specials. Ranges also from ``torch.finfo``.
"""

import doctest
import itertools

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.demos.specs.inference_quantization import WeightQuantizationParams
from app.worker.demos import inference_quantization as demo_module
from app.worker.demos.inference_quantization import make_tensors, symmetric
from tests.worker.conftest import RunDemo

CPU = torch.device("cpu")


def tensors(**params: object) -> tuple[np.ndarray, np.ndarray]:
    """The demo's W and X for these parameters, as NumPy arrays."""
    w, x = make_tensors(WeightQuantizationParams(**params), CPU)  # type: ignore[arg-type]
    return w.numpy(), x.numpy()


# --- NumPy references ----------------------------------------------------------------


def np_fp16(s: np.ndarray) -> np.ndarray:
    """fp64 scales stored as fp16 by way of fp32, as the demo (and torch's cast) does."""
    return s.astype(np.float32).astype(np.float16).astype(np.float64)


def np_symmetric(w: np.ndarray, bits: int, block: int, fp16: bool = True) -> np.ndarray:
    qmax = 2 ** (bits - 1) - 1
    x = w.reshape(-1, block)
    s = np.maximum(np.abs(x).max(axis=1, keepdims=True), 1e-5) / qmax
    if fp16:
        s = np_fp16(s)
    return (np.clip(np.round(x / s), -qmax, qmax) * s).reshape(w.shape)


def np_asymmetric(w: np.ndarray, bits: int, block: int) -> np.ndarray:
    max_int = 2**bits - 1
    x = w.reshape(-1, block)
    low, high = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    s = np_fp16(np.maximum(high - low, 1e-5) / max_int)
    z = np.clip(-np.round(low / s), 0, max_int)
    return ((np.clip(np.round(x / s) + z, 0, max_int) - z) * s).reshape(w.shape)


def rel(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def fp8_values(exponent_bits: int, mantissa_bits: int, *, ieee_specials: bool) -> np.ndarray:
    """Every finite non-negative value of an FP8 format, from its bit layout."""
    bias = 2 ** (exponent_bits - 1) - 1
    values = []
    for e, m in itertools.product(range(2**exponent_bits), range(2**mantissa_bits)):
        top = e == 2**exponent_bits - 1
        if top and (ieee_specials or m == 2**mantissa_bits - 1):
            continue  # E5M2: inf and NaN; E4M3: only S.1111.111 is NaN
        if e == 0:
            values.append(m / 2**mantissa_bits * 2.0 ** (1 - bias))
        else:
            values.append((1 + m / 2**mantissa_bits) * 2.0 ** (e - bias))
    return np.array(sorted(values))


def np_fp8_round(w: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Round |w| to the nearest grid value (random fp64 data: ties have probability 0)."""
    a = np.abs(w).ravel()
    i = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
    lower, upper = grid[i - 1], grid[i]
    nearest = np.where(a - lower <= upper - a, lower, upper)
    return (np.sign(w).ravel() * nearest).reshape(w.shape)


E4M3 = fp8_values(4, 3, ieee_specials=False)
E5M2 = fp8_values(5, 2, ieee_specials=True)

CASES = [
    {},
    {"bits": 8},
    {"weight_outliers": 8},
    {"bits": 8, "group_size": 64, "weight_outliers": 4, "weight_outlier_scale": 100.0},
    {"rows": 64, "cols": 96, "group_size": 32, "tokens": 16, "seed": 3},
]

# --- weight-only ---------------------------------------------------------------------


def test_quantiser_docstrings_run() -> None:
    assert doctest.testmod(demo_module).failed == 0


def test_int4_by_hand() -> None:
    # absmax 1.0, qmax 7: step 1/7; 0.26 · 7 = 1.82 → 2; 0.1 · 7 = 0.7 → 1; -0.5 · 7 = -3.5 → -4.
    w = torch.tensor([[1.0, -0.5, 0.26, 0.1]], dtype=torch.float64)
    w_hat, s = symmetric(w, bits=4, block=4, fp16_scales=False)
    assert w_hat.flatten().tolist() == pytest.approx([1.0, -4 / 7, 2 / 7, 1 / 7])
    # Two groups of two get their own steps: 1/7 and 0.26/7.
    w_hat, s = symmetric(w, bits=4, block=2, fp16_scales=False)
    assert s.flatten().tolist() == pytest.approx([1 / 7, 0.26 / 7])
    assert w_hat.flatten().tolist() == pytest.approx([1.0, -4 / 7, 0.26, 0.26 * 3 / 7])


@pytest.mark.parametrize("case", CASES)
def test_weight_only_matches_numpy(run: RunDemo, case: dict[str, object]) -> None:
    out = run("weight_quantization", **case).outputs
    params = WeightQuantizationParams(**case)  # type: ignore[arg-type]
    w, x = tensors(**case)
    y = x @ w.T
    blocks = {"per_tensor": w.size, "per_channel": params.cols, "per_group": params.group_size}
    for name, block in blocks.items():
        w_hat = np_symmetric(w, params.bits, block)
        assert out[f"{name}_error"] == pytest.approx(rel(w_hat, w), rel=1e-9), name
        assert out[f"{name}_output_error"] == pytest.approx(rel(x @ w_hat.T, y), rel=1e-9), name
    w_hat = np_asymmetric(w, params.bits, params.group_size)
    assert out["asym_group_error"] == pytest.approx(rel(w_hat, w), rel=1e-9)
    assert out["asym_group_output_error"] == pytest.approx(rel(x @ w_hat.T, y), rel=1e-9)


def test_bits_per_weight_count_the_scales(run: RunDemo) -> None:
    out = run("weight_quantization", rows=512, cols=1024, bits=4, group_size=128).outputs
    assert out["per_tensor_bits"] == 4 + 16 / (512 * 1024)
    assert out["per_channel_bits"] == 4 + 16 / 1024
    assert out["per_group_bits"] == 4.125
    assert out["asym_group_bits"] == 4 + 20 / 128  # fp16 scale + 4-bit zero point
    assert run("weight_quantization", bits=8, group_size=32).outputs["per_group_bits"] == 8.5


@pytest.mark.parametrize("bits", [4, 8])
def test_error_follows_uniform_rounding(run: RunDemo, bits: int) -> None:
    # Over seeds 0–49 at the defaults |measured / predicted − 1| stayed below 0.6% (per group,
    # the worst); 3% leaves room yet fails if the step were off by a factor of 1.05.
    for seed in range(5):
        result = run("weight_quantization", bits=bits, seed=seed)
        for name in ("per_tensor", "per_channel", "per_group"):
            measured, predicted = result.outputs[f"{name}_error"], result.theory[f"{name}_error"]
            assert measured == pytest.approx(predicted, rel=0.03), (name, seed)


@pytest.mark.parametrize("seed", range(5))
def test_finer_scales_lower_the_error(run: RunDemo, seed: int) -> None:
    for outliers in (0, 8):
        out = run("weight_quantization", weight_outliers=outliers, seed=seed).outputs
        assert out["per_group_error"] < out["per_channel_error"] < out["per_tensor_error"]
        assert out["asym_group_error"] < out["per_group_error"]
    # Outlier input columns hurt a per-row scale far more than a per-group one (seeds 0–49:
    # per row ×3.7 at least, per group ×2.5 at most).
    clean = run("weight_quantization", seed=seed).outputs
    dirty = run("weight_quantization", weight_outliers=8, seed=seed).outputs
    assert dirty["per_channel_error"] / clean["per_channel_error"] > 3
    assert dirty["per_group_error"] / clean["per_group_error"] < 3


def test_group_size_series_rises_with_the_group(run: RunDemo) -> None:
    by_group = run("weight_quantization").series[0]
    assert by_group.x[0] == 8 and by_group.x[-1] == 1024
    assert by_group.y == sorted(by_group.y)


# --- SmoothQuant W8A8 ----------------------------------------------------------------


def np_smoothing(x: np.ndarray, w: np.ndarray, alpha: float) -> np.ndarray:
    act = np.maximum(np.abs(x).max(axis=0), 1e-5)
    weight = np.maximum(np.abs(w).max(axis=0), 1e-5)
    return np.maximum(act**alpha / weight ** (1 - alpha), 1e-5)


def np_w8a8(x: np.ndarray, w: np.ndarray, per_token: bool = False) -> np.ndarray:
    x_hat = np_symmetric(x, 8, x.shape[1] if per_token else x.size, fp16=False)
    return x_hat @ np_symmetric(w, 8, w.shape[1], fp16=False).T


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.85, 1.0])
def test_migration_is_exact_in_float64(run: RunDemo, alpha: float) -> None:
    w, x = tensors(alpha=alpha)
    s = np_smoothing(x, w, alpha)
    y = x @ w.T
    assert np.abs((x / s) @ (w * s).T - y).max() / np.abs(y).max() < 1e-12
    assert (x / s) @ (w * s).T == pytest.approx(y, rel=1e-12, abs=1e-12 * np.abs(y).max())
    assert run("weight_quantization", alpha=alpha).outputs["invariance_error"] < 1e-12


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_w8a8_matches_numpy(run: RunDemo, alpha: float) -> None:
    out = run("weight_quantization", alpha=alpha).outputs
    w, x = tensors(alpha=alpha)
    y = x @ w.T
    s = np_smoothing(x, w, alpha)
    assert out["w8a8_error"] == pytest.approx(rel(np_w8a8(x, w), y), rel=1e-9)
    assert out["w8a8_per_token_error"] == pytest.approx(rel(np_w8a8(x, w, True), y), rel=1e-9)
    assert out["w8a8_smooth_error"] == pytest.approx(rel(np_w8a8(x / s, w * s), y), rel=1e-9)
    assert out["act_error"] == pytest.approx(rel(np_symmetric(x, 8, x.size, False), x), rel=1e-9)
    x_s, w_s = x / s, w * s
    assert out["smooth_act_error"] == pytest.approx(
        rel(np_symmetric(x_s, 8, x_s.size, False), x_s), rel=1e-9
    )
    assert out["smooth_weight_error"] == pytest.approx(
        rel(np_symmetric(w_s, 8, w_s.shape[1], False), w_s), rel=1e-9
    )
    for name, acts in (("act_outlier_ratio", x), ("smooth_act_outlier_ratio", x_s)):
        channel_max = np.abs(acts).max(axis=0)
        # Even column count: NumPy's median averages the middle two, torch's takes the lower.
        lower_median = np.sort(channel_max)[(channel_max.size - 1) // 2]
        assert out[name] == pytest.approx(channel_max.max() / lower_median, rel=1e-9), name


@pytest.mark.parametrize("seed", range(5))
def test_smoothing_helps_when_activations_have_outlier_channels(run: RunDemo, seed: int) -> None:
    # Seeds 0–49: outlier ratio ≥ 51, cut ≥ 6.6× by smoothing; W8A8 error cut ≥ 5.0×.
    out = run("weight_quantization", seed=seed).outputs  # 8 channels × 50
    assert out["act_outlier_ratio"] > 30
    assert out["smooth_act_outlier_ratio"] < out["act_outlier_ratio"] / 4
    assert out["w8a8_smooth_error"] < out["w8a8_error"] / 3
    assert out["w8a8_per_token_error"] > out["w8a8_smooth_error"]


def test_alpha_zero_leaves_the_outliers_in_the_activations(run: RunDemo) -> None:
    series = run("weight_quantization").series[1]
    assert series.x == [0.0, 0.25, 0.5, 0.75, 1.0]
    # α = 0.5 balances the two; at α = 1 the weights get the whole range and suffer.
    assert min(series.y) == series.y[2] or min(series.y) == series.y[3]
    assert series.y[4] > series.y[2]


# --- FP8 -----------------------------------------------------------------------------


def test_fp8_layouts_agree_with_torch_finfo() -> None:
    for dtype, grid in ((torch.float8_e4m3fn, E4M3), (torch.float8_e5m2, E5M2)):
        info = torch.finfo(dtype)
        assert grid.max() == info.max
        assert grid[grid > 0].min() == info.smallest_normal * info.eps
        assert grid[grid > 1].min() - 1 == info.eps


def test_fp8_ranges(run: RunDemo) -> None:
    out = run("weight_quantization").outputs
    assert out["e4m3_max"] == 448.0 == 2**8 * 1.75
    assert out["e5m2_max"] == 57344.0 == 2**15 * 1.75
    assert out["e4m3_min_subnormal"] == 2.0**-9
    assert out["e5m2_min_subnormal"] == 2.0**-16
    assert (out["e4m3_step"], out["e5m2_step"]) == (2.0**-3, 2.0**-2)


@pytest.mark.parametrize("case", CASES[:3])
def test_fp8_cast_matches_rounding_to_the_grid(run: RunDemo, case: dict[str, object]) -> None:
    out = run("weight_quantization", **case).outputs
    w, _ = tensors(**case)
    for name, grid in (("e4m3", E4M3), ("e5m2", E5M2)):
        scale = grid.max() / np.abs(w).max()
        assert out[f"{name}_error"] == pytest.approx(
            rel(np_fp8_round(w * scale, grid) / scale, w), rel=1e-9
        )
    assert out["e4m3_unscaled_error"] == pytest.approx(rel(np_fp8_round(w, E4M3), w), rel=1e-9)
    # One mantissa bit fewer: E5M2's relative error is about twice E4M3's (seeds 0–49: 1.98–2.00).
    assert 1.8 < out["e5m2_error"] / out["e4m3_error"] < 2.2


# --- validation ----------------------------------------------------------------------


def test_same_seed_same_numbers(run: RunDemo) -> None:
    assert run("weight_quantization", seed=7).outputs == run("weight_quantization", seed=7).outputs


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        ({"cols": 1000, "group_size": 128}, "group_size", "divide cols"),
        ({"rows": 4096, "cols": 4096}, "cols", "lower cols to 256"),
        ({"rows": 2048, "cols": 512, "tokens": 256}, "tokens", "lower tokens to 128"),
        ({"alpha": 1.5}, "alpha", "1"),
        ({"bits": 3}, "bits", "8"),
        ({"act_outliers": 65}, "act_outliers", "64"),
    ],
)
def test_bad_parameters_are_422(
    client: TestClient, body: dict[str, object], param: str, says: str
) -> None:
    response = client.post("/demos/weight_quantization", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert [problem["param"] for problem in detail] == [param]
    assert says in detail[0]["message"]

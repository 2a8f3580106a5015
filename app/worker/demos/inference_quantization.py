"""``weight_quantization``: INT8/INT4 weight error by scale granularity, SmoothQuant W8A8, FP8.

Three measurements on one random linear layer, all in fp64 on the worker's device:

1. Weight-only round-to-nearest. Symmetric absmax (``s = max|w| / qmax``,
   ``q = round(w / s)`` clamped to ±qmax) with one scale for the whole tensor,
   per output row, or per group of ``group_size`` consecutive input weights;
   and asymmetric per group as llm-awq's ``pseudo_quantize_tensor`` does it
   (``s = (max − min) / (2^b − 1)``, integer zero point ``z = −round(min / s)``).
   Scales are rounded to fp16, as they are stored. Rounding errors are close to
   uniform on [−s/2, s/2], so the relative error is predicted by
   ``sqrt(mean(s²) / 12) / RMS(W)``.
2. W8A8 with activation outlier channels, as SmoothQuant's ``fake_quant.py``
   simulates it: activations int8 with one absmax scale per tensor (or per
   token), weights int8 per output row. Then the same after SmoothQuant's
   migration (``smooth.py``): ``s_j = max|X_j|^α / max|W_j|^(1−α)`` per input
   channel j, X → X diag(s)⁻¹ and W → W diag(s), which leaves XWᵀ unchanged.
3. FP8: every byte decoded as ``float8_e4m3fn`` and ``float8_e5m2`` gives the
   formats' largest finite value, smallest subnormal and the gap above 1; the
   weights are cast to each with one per-tensor scale (max|W| → the format's
   maximum) and without.
"""

import math

import torch

from app.demos.specs import inference_quantization as spec
from app.demos.specs.inference_quantization import WeightQuantizationParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

WEIGHT_STD = 0.02
"""Standard deviation of the random weights (a typical init scale; errors are relative)."""

SCALE_BITS = 16
"""Each scale is stored as fp16."""

ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Migration strengths of the W8A8-error-against-α series."""

FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}

# --- data ----------------------------------------------------------------------------


def make_tensors(
    params: WeightQuantizationParams, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights W (rows × cols) and activations X (tokens × cols), both fp64.

    W is N(0, 0.02²) with ``weight_outliers`` random input columns multiplied by
    ``weight_outlier_scale``; X is N(0, 1) with ``act_outliers`` random input
    channels multiplied by ``act_outlier_scale``.
    """
    generator = seeded(device, params.seed)
    f64 = torch.float64
    w = torch.randn(params.rows, params.cols, generator=generator, dtype=f64, device=device)
    w.mul_(WEIGHT_STD)
    w_cols = torch.randperm(params.cols, generator=generator, device=device)
    w[:, w_cols[: params.weight_outliers]] *= params.weight_outlier_scale
    x = torch.randn(params.tokens, params.cols, generator=generator, dtype=f64, device=device)
    x_cols = torch.randperm(params.cols, generator=generator, device=device)
    x[:, x_cols[: params.act_outliers]] *= params.act_outlier_scale
    return w, x


# --- quantisers ----------------------------------------------------------------------


def to_fp16(scales: torch.Tensor) -> torch.Tensor:
    """Scales as stored: through fp32 to fp16 (torch's fp64 → fp16 cast takes that path)."""
    return scales.float().half().double()


def symmetric(
    w: torch.Tensor, *, bits: int, block: int, fp16_scales: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """Absmax-quantise each run of ``block`` consecutive elements; return (Ŵ, scales).

    ``block`` = numel: one scale per tensor; = the row length: per row; smaller:
    per group within a row.

    Example:
        >>> w = torch.tensor([[1.0, -0.5, 0.26, 0.1]], dtype=torch.float64)
        >>> w_hat, s = symmetric(w, bits=4, block=4, fp16_scales=False)
        >>> [round(v, 4) for v in w_hat.flatten().tolist()], round(s.item(), 4)
        ([1.0, -0.5714, 0.2857, 0.1429], 0.1429)
    """
    qmax = 2 ** (bits - 1) - 1
    x = w.reshape(-1, block)
    s = x.abs().amax(dim=1, keepdim=True).clamp_(min=1e-5).div_(qmax)
    if fp16_scales:
        s = to_fp16(s)
    return (x / s).round_().clamp_(-qmax, qmax).mul_(s).reshape(w.shape), s


def asymmetric(w: torch.Tensor, *, bits: int, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Min/max quantisation with an integer zero point per block (llm-awq's scheme).

    Example:
        >>> w = torch.tensor([[0.0, 0.1, 0.2, 1.5]], dtype=torch.float64)
        >>> w_hat, s = asymmetric(w, bits=4, block=4)
        >>> [round(v, 2) for v in w_hat.flatten().tolist()]
        [0.0, 0.1, 0.2, 1.5]
    """
    max_int = 2**bits - 1
    x = w.reshape(-1, block)
    low, high = x.amin(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)
    s = to_fp16((high - low).clamp_(min=1e-5) / max_int)
    zero = (-(low / s).round()).clamp_(0, max_int)
    q = (x / s).round_().add_(zero).clamp_(0, max_int)
    return q.sub_(zero).mul_(s).reshape(w.shape), s


def relative_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """‖approx − exact‖ / ‖exact‖ (Frobenius)."""
    return float((approx - exact).norm() / exact.norm())


def predicted_error(scales: torch.Tensor, w: torch.Tensor) -> float:
    """sqrt(mean(s²) / 12) / RMS(W): uniform rounding on [−s/2, s/2], blocks of equal size."""
    return math.sqrt(float((scales**2).mean()) / 12 / float((w**2).mean()))


def smoothing_scales(x: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    """SmoothQuant's s_j = max|X_j|^α / max|W_j|^(1−α), j an input channel (W is out × in)."""
    act_max = x.abs().amax(dim=0).clamp_(min=1e-5)
    weight_max = w.abs().amax(dim=0).clamp_(min=1e-5)
    return (act_max**alpha / weight_max ** (1 - alpha)).clamp_(min=1e-5)


def w8a8(x: torch.Tensor, w: torch.Tensor, *, per_token: bool = False) -> torch.Tensor:
    """XWᵀ with X int8 (one scale per tensor, or per token) and W int8 per output row."""
    x_hat, _ = symmetric(x, bits=8, block=x.shape[1] if per_token else x.numel(), fp16_scales=False)
    w_hat, _ = symmetric(w, bits=8, block=w.shape[1], fp16_scales=False)
    return x_hat @ w_hat.T


def outlier_ratio(x: torch.Tensor) -> float:
    """Largest |X| over the median of the per-channel maxima."""
    channel_max = x.abs().amax(dim=0)
    return float(channel_max.max() / channel_max.median())


def fp8_grid(dtype: torch.dtype) -> torch.Tensor:
    """Every finite value of an 8-bit float format, sorted: all 256 bytes decoded."""
    values = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).double()
    finite, _ = values[torch.isfinite(values)].sort()
    return finite


def fp8_cast(w: torch.Tensor, dtype: torch.dtype, fmax: float, *, scaled: bool) -> torch.Tensor:
    """W through ``dtype`` and back: with one scale mapping max|W| to ``fmax``, or as it is.

    Values are clamped to ±fmax first (a saturating cast): float8_e4m3fn has no
    infinity, and what an overflowing cast gives depends on the converter (NaN in
    PyTorch's eager cast before 2.12 and in ml_dtypes, 448 in PyTorch since).
    """
    scale = fmax / float(w.abs().max()) if scaled else 1.0
    return (w * scale).clamp_(-fmax, fmax).to(dtype).double().div_(scale)


# --- compute -------------------------------------------------------------------------


def compute(params: WeightQuantizationParams, device: torch.device) -> Outcome:
    """Quantise W three ways, W8A8 with and without smoothing, and cast W to FP8."""
    w, x = make_tensors(params, device)
    y = x @ w.T
    bits, cols, group = params.bits, params.cols, params.group_size
    blocks = {"per_tensor": w.numel(), "per_channel": cols, "per_group": group}
    outputs: dict[str, float] = {}
    theory: dict[str, float] = {}
    for name, block in blocks.items():
        w_hat, s = symmetric(w, bits=bits, block=block)
        outputs[f"{name}_error"] = relative_error(w_hat, w)
        outputs[f"{name}_predicted"] = predicted_error(s, w)
        if not params.weight_outliers:
            # With outlier columns most weights fall inside ±s/2 and round to 0: their
            # error is the weight itself, not uniform on [−s/2, s/2].
            theory[f"{name}_error"] = outputs[f"{name}_predicted"]
        outputs[f"{name}_output_error"] = relative_error(x @ w_hat.T, y)
        outputs[f"{name}_bits"] = bits + SCALE_BITS * s.numel() / w.numel()
        theory[f"{name}_bits"] = bits + SCALE_BITS / block
    w_hat, s = asymmetric(w, bits=bits, block=group)
    outputs["asym_group_error"] = relative_error(w_hat, w)
    outputs["asym_group_output_error"] = relative_error(x @ w_hat.T, y)
    outputs["asym_group_bits"] = bits + (SCALE_BITS + bits) * s.numel() / w.numel()
    theory["asym_group_bits"] = bits + (SCALE_BITS + bits) / group
    del w_hat

    s = smoothing_scales(x, w, params.alpha)
    x_s, w_s = x / s, w * s
    y_s = x_s @ w_s.T
    outputs |= {
        "act_outlier_ratio": outlier_ratio(x),
        "smooth_act_outlier_ratio": outlier_ratio(x_s),
        "w8a8_error": relative_error(w8a8(x, w), y),
        "w8a8_per_token_error": relative_error(w8a8(x, w, per_token=True), y),
        "w8a8_smooth_error": relative_error(w8a8(x_s, w_s), y),
        "act_error": relative_error(symmetric(x, bits=8, block=x.numel(), fp16_scales=False)[0], x),
        "smooth_act_error": relative_error(
            symmetric(x_s, bits=8, block=x_s.numel(), fp16_scales=False)[0], x_s
        ),
        "smooth_weight_error": relative_error(
            symmetric(w_s, bits=8, block=cols, fp16_scales=False)[0], w_s
        ),
        "invariance_error": float((y_s - y).abs().max() / y.abs().max()),
    }
    theory["invariance_error"] = 0.0
    del x_s, w_s, y_s

    for name, dtype in FP8.items():
        grid = fp8_grid(dtype)
        fmax = float(grid.max())
        outputs[f"{name}_max"] = fmax
        outputs[f"{name}_min_subnormal"] = float(grid[grid > 0].min())
        outputs[f"{name}_step"] = float(grid[grid > 1].min()) - 1.0
        outputs[f"{name}_error"] = relative_error(fp8_cast(w, dtype, fmax, scaled=True), w)
        info = torch.finfo(dtype)
        theory[f"{name}_max"] = info.max
        theory[f"{name}_min_subnormal"] = info.smallest_normal * info.eps
        theory[f"{name}_step"] = info.eps
    outputs["e4m3_unscaled_error"] = relative_error(
        fp8_cast(w, FP8["e4m3"], outputs["e4m3_max"], scaled=False), w
    )
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_series(w, x, y, params),
        notes=_notes(params),
    )


def _series(
    w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, params: WeightQuantizationParams
) -> list[Series]:
    sizes = [g for g in (2**k for k in range(3, 13)) if g <= params.cols and params.cols % g == 0]
    errors = [relative_error(symmetric(w, bits=params.bits, block=g)[0], w) for g in sizes]
    w8a8_errors = []
    for alpha in ALPHAS:
        s = smoothing_scales(x, w, alpha)
        w8a8_errors.append(relative_error(w8a8(x / s, w * s), y))
    return [
        Series(
            name=f"int{params.bits} per group",
            kind="line",
            x=[float(g) for g in sizes],
            y=errors,
            x_label="group size",
            y_label="relative weight error",
        ),
        Series(
            name="W8A8 after smoothing",
            kind="line",
            x=list(ALPHAS),
            y=w8a8_errors,
            x_label="migration strength α",
            y_label="relative output error",
        ),
    ]


def _notes(params: WeightQuantizationParams) -> list[str]:
    return [
        "Synthetic Gaussian weights and activations with planted outlier channels: real "
        "checkpoints have heavier tails, so read the ordering of the schemes, not the exact "
        "percentages.",
        "Round-to-nearest only: GPTQ and AWQ keep the same storage and lower the error.",
        f"Bits per weight count fp16 scales (and a {params.bits}-bit zero point for the "
        "asymmetric scheme).",
    ]


# --- the demo ------------------------------------------------------------------------

WEIGHT_QUANTIZATION = Demo(spec=spec.WEIGHT_QUANTIZATION, compute=compute)

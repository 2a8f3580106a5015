"""``weight_quantization``: INT8/INT4 weight error by scale granularity, SmoothQuant W8A8, FP8.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/inference_quantization.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_WEIGHTS = 2**20
"""Cap on rows × cols: an 8 MiB fp64 weight matrix, of which the demo holds about ten copies."""

MAX_ACTIVATIONS = 2**18
"""Cap on tokens × cols and on tokens × rows: the activations and each matmul output (2 MiB)."""


class WeightQuantizationParams(DemoParams):
    rows: int = Field(
        512,
        ge=16,
        le=4096,
        title="Output features",
        description="Rows of the weight matrix W (out_features of the linear layer).",
    )
    cols: int = Field(
        1024,
        ge=32,
        le=4096,
        validate_default=True,
        title="Input features",
        description=f"Columns of W (in_features); rows × cols may be at most {MAX_WEIGHTS:,}.",
    )
    bits: Literal[8, 4] = Field(
        4,
        title="Weight bits",
        description="Integer width of the weight-only schemes: int8 (qmax 127) or int4 (qmax 7).",
    )
    group_size: int = Field(
        128,
        ge=8,
        le=4096,
        validate_default=True,
        title="Group size",
        description="Consecutive input weights sharing one scale in the per-group schemes; "
        "must divide cols.",
    )
    weight_outliers: int = Field(
        0,
        ge=0,
        le=64,
        title="Weight outlier columns",
        description="Input columns of W multiplied by the weight outlier scale.",
    )
    weight_outlier_scale: float = Field(
        10.0,
        ge=1.0,
        le=1000.0,
        title="Weight outlier scale",
        description="Factor applied to the weight outlier columns.",
    )
    tokens: int = Field(
        128,
        ge=8,
        le=512,
        validate_default=True,
        title="Tokens",
        description=f"Rows of the activations X; tokens × cols and tokens × rows may be at most "
        f"{MAX_ACTIVATIONS:,}.",
    )
    act_outliers: int = Field(
        8,
        ge=0,
        le=64,
        title="Activation outlier channels",
        description="Input channels of X multiplied by the activation outlier scale.",
    )
    act_outlier_scale: float = Field(
        50.0,
        ge=1.0,
        le=1000.0,
        title="Activation outlier scale",
        description="Factor applied to the activation outlier channels.",
    )
    alpha: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        title="Migration strength α",
        description="SmoothQuant's α in s_j = max(abs X_j)^α / max(abs W_j)^(1−α): at 0 the "
        "activations keep their outliers, at 1 every activation channel is scaled to a maximum "
        "of 1 and the weights take the range.",
    )
    seed: Seed = 0

    @field_validator("cols")
    @classmethod
    def _weights_within_budget(cls, cols: int, info: ValidationInfo) -> int:
        rows = info.data.get("rows")
        if rows is not None and rows * cols > MAX_WEIGHTS:
            raise PydanticCustomError(
                "budget",
                "rows × cols must be at most {limit} to keep one request under 2 s and "
                "256 MB, got {rows} × {cols}: lower cols to {fit} or less",
                {
                    "limit": f"{MAX_WEIGHTS:,}",
                    "rows": rows,
                    "cols": cols,
                    "fit": MAX_WEIGHTS // rows,
                },
            )
        return cols

    @field_validator("group_size")
    @classmethod
    def _divides_cols(cls, group_size: int, info: ValidationInfo) -> int:
        cols = info.data.get("cols")
        if cols is not None and cols % group_size:
            raise PydanticCustomError(
                "group",
                "group_size must divide cols ({cols}), got {group_size}: use a divisor of "
                "cols such as {example}",
                {
                    "cols": cols,
                    "group_size": group_size,
                    "example": max(d for d in (8, 16, 32, 64, 128, 256) if cols % d == 0)
                    if cols % 8 == 0
                    else cols,
                },
            )
        return group_size

    @field_validator("tokens")
    @classmethod
    def _activations_within_budget(cls, tokens: int, info: ValidationInfo) -> int:
        rows, cols = info.data.get("rows"), info.data.get("cols")
        if rows is None or cols is None:  # already reported: one problem per request field
            return tokens
        widest = max(rows, cols)
        if tokens * widest > MAX_ACTIVATIONS:
            raise PydanticCustomError(
                "budget",
                "tokens × max(rows, cols) must be at most {limit} to keep one request under "
                "2 s and 256 MB, got {tokens} × {widest}: lower tokens to {fit} or less",
                {
                    "limit": f"{MAX_ACTIVATIONS:,}",
                    "tokens": tokens,
                    "widest": widest,
                    "fit": MAX_ACTIVATIONS // widest,
                },
            )
        return tokens


WEIGHT_QUANTIZATION = DemoSpec(
    name="weight_quantization",
    version=1,
    title="Weight quantisation: INT8/INT4 granularity, SmoothQuant W8A8 and FP8",
    description="Quantises a random weight matrix (with optional outlier columns) per tensor, "
    "per output channel and per group, measures the weight and matmul-output error and the "
    "bits per weight with scales; quantises activations with outlier channels to W8A8 with and "
    "without SmoothQuant's migration; and casts the same weights to FP8 E4M3 and E5M2.",
    params=WeightQuantizationParams,
    outputs={
        "per_tensor_error": "‖Ŵ − W‖ / ‖W‖ with one symmetric absmax scale for the whole W.",
        "per_channel_error": "The same with one scale per output row.",
        "per_group_error": "The same with one scale per group of group_size input weights.",
        "asym_group_error": "Asymmetric (min/max, integer zero point) per group.",
        "per_tensor_predicted": "sqrt(mean(s²)/12) / RMS(W) for the per-tensor scheme, from its "
        "fp16 scales.",
        "per_channel_predicted": "The same for the per-channel scheme.",
        "per_group_predicted": "The same for the per-group scheme.",
        "per_tensor_output_error": "‖XŴᵀ − XWᵀ‖ / ‖XWᵀ‖, X unquantised, per tensor.",
        "per_channel_output_error": "The same, per output channel.",
        "per_group_output_error": "The same, per group.",
        "asym_group_output_error": "The same, asymmetric per group.",
        "per_tensor_bits": "Bits per weight with one fp16 scale for the tensor.",
        "per_channel_bits": "Bits per weight with one fp16 scale per row.",
        "per_group_bits": "Bits per weight with one fp16 scale per group.",
        "asym_group_bits": "Bits per weight with an fp16 scale and a b-bit zero point per group.",
        "act_outlier_ratio": "Largest abs(X) over the median of the per-channel maxima of abs(X).",
        "smooth_act_outlier_ratio": "The same for X diag(s)⁻¹.",
        "w8a8_error": "Output error of int8 X (one scale per tensor) times int8 W (one scale "
        "per row), no smoothing.",
        "w8a8_per_token_error": "The same with one activation scale per token.",
        "w8a8_smooth_error": "The same as w8a8_error after the migration with the chosen α.",
        "act_error": "‖X̂ − X‖ / ‖X‖ for per-tensor int8 X, no smoothing.",
        "smooth_act_error": "The same for X diag(s)⁻¹.",
        "smooth_weight_error": "‖Ŵ′ − W′‖ / ‖W′‖ for per-row int8 W′ = W diag(s).",
        "invariance_error": "max abs(XWᵀ − (X diag(s)⁻¹)(W diag(s))ᵀ) / max abs(XWᵀ), fp64, "
        "before quantising.",
        "e4m3_max": "Largest finite float8_e4m3fn value, from all 256 bytes decoded.",
        "e5m2_max": "Largest finite float8_e5m2 value.",
        "e4m3_min_subnormal": "Smallest positive float8_e4m3fn value.",
        "e5m2_min_subnormal": "Smallest positive float8_e5m2 value.",
        "e4m3_step": "Gap between 1 and the next float8_e4m3fn value: the relative rounding step.",
        "e5m2_step": "The same for float8_e5m2.",
        "e4m3_error": "‖Ŵ − W‖ / ‖W‖ through float8_e4m3fn with one scale mapping max abs(W) "
        "to 448.",
        "e5m2_error": "The same through float8_e5m2 (max 57,344).",
        "e4m3_unscaled_error": "The same through float8_e4m3fn with no scale.",
    },
    worst_cases=(
        {"rows": 1024, "cols": 1024, "tokens": 256, "group_size": 8, "weight_outliers": 64},
        {"rows": 256, "cols": 4096, "tokens": 64, "group_size": 8, "act_outliers": 64},
    ),
)

"""``lora``: LoRA on a real ``nn.Linear``, its merge, and LoRA / QLoRA sizes for real models.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/finetuning_lora.py``. No torch here.

The model configs are the released ones:

- Llama-2-7B: ``llama_params``' defaults, which that demo sources to
  meta-llama/Llama-2-7b-hf ``config.json``.
- Llama-3.1-8B and -70B: meta-llama/llama-models ``models/llama3_1/api/sku_list.py``
  (dim, n_layers, n_heads, n_kv_heads, vocab 128256, ffn_dim_multiplier 1.3,
  multiple_of 1024 and 4096); the MLP width is the reference ``FeedForward``'s
  ``multiple_of * ceil(int(1.3 * int(2 * 4 * dim / 3)) / multiple_of)``: 14336
  and 28672. The reference model has its own output layer (untied).
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_ELEMENTS = 2**22
"""Most elements of the demo layer's weight (32 MiB in float64; the merge makes a copy)."""

MAX_WORK = 2**30
"""Most d_in × d_out × tokens × steps: the multiply-adds of the frozen path over training."""

ModelName = Literal["llama2_7b", "llama3_1_8b", "llama3_1_70b"]
Targets = Literal["q_v", "attention", "all_linear"]

MODELS: dict[str, dict[str, int | bool]] = {
    "llama2_7b": {
        "vocab": 32_000,
        "hidden": 4096,
        "intermediate": 11_008,
        "layers": 32,
        "heads": 32,
        "kv_heads": 32,
        "tie_embeddings": False,
    },
    "llama3_1_8b": {
        "vocab": 128_256,
        "hidden": 4096,
        "intermediate": 14_336,
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "tie_embeddings": False,
    },
    "llama3_1_70b": {
        "vocab": 128_256,
        "hidden": 8192,
        "intermediate": 28_672,
        "layers": 80,
        "heads": 64,
        "kv_heads": 8,
        "tie_embeddings": False,
    },
}
"""Config fields of ``llama_params`` for each released model (sources in the module docstring)."""

TARGET_MODULES: dict[str, tuple[str, ...]] = {
    "q_v": ("q_proj", "v_proj"),
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "all_linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
}
"""The projections of every block that get an adapter (the output head never does)."""


class LoraParams(DemoParams):
    d_in: int = Field(
        1024,
        ge=1,
        le=4096,
        title="Input size k",
        description="in_features of the nn.Linear that is adapted (k in W ∈ R^(d×k)).",
    )
    d_out: int = Field(
        1024,
        ge=1,
        le=4096,
        title="Output size d",
        description=f"out_features of the nn.Linear (d); d_in × d_out may be at most "
        f"{MAX_ELEMENTS:,}.",
    )
    rank: int = Field(
        8,
        ge=1,
        le=256,
        title="Rank r",
        description="Rank of the update BA, for the layer and the model; at most min(d_in, d_out).",
    )
    alpha: float = Field(
        16.0,
        ge=0.125,
        le=1024.0,
        title="alpha",
        description="lora_alpha: the update BAx is multiplied by alpha / r (alpha / sqrt(r) "
        "with rslora).",
    )
    rslora: bool = Field(
        False,
        title="rsLoRA scaling",
        description="Scale by alpha / sqrt(r) instead of alpha / r, as peft's use_rslora does.",
    )
    tokens: int = Field(
        64, ge=1, le=1024, title="Tokens", description="Rows of the training batch x."
    )
    steps: int = Field(
        5,
        ge=1,
        le=100,
        title="Optimizer steps",
        description=f"Adam steps on A and B before merging; d_in × d_out × tokens × steps may "
        f"be at most {MAX_WORK:,}.",
    )
    model: ModelName = Field(
        "llama2_7b",
        title="Model",
        description="Released config built on the meta device for the counts and QLoRA sizes.",
    )
    targets: Targets = Field(
        "q_v",
        title="Adapted projections",
        description="q_v: q_proj and v_proj; attention: q, k, v, o; all_linear: also gate, "
        "up, down.",
    )
    seed: Seed = 0

    @field_validator("d_out")
    @classmethod
    def _layer_within_budget(cls, d_out: int, info: ValidationInfo) -> int:
        d_in = info.data.get("d_in")
        if d_in is not None and d_in * d_out > MAX_ELEMENTS:
            raise PydanticCustomError(
                "budget",
                "d_in × d_out must be at most {limit} to keep one request under 256 MB, got "
                "{d_in} × {d_out}: lower d_out to {fit} or less",
                {
                    "limit": f"{MAX_ELEMENTS:,}",
                    "d_in": d_in,
                    "d_out": d_out,
                    "fit": MAX_ELEMENTS // d_in,
                },
            )
        return d_out

    @field_validator("rank")
    @classmethod
    def _rank_fits(cls, rank: int, info: ValidationInfo) -> int:
        d_in, d_out = info.data.get("d_in"), info.data.get("d_out")
        if d_in is not None and d_out is not None and rank > min(d_in, d_out):
            raise PydanticCustomError(
                "rank",
                "rank must be at most min(d_in, d_out) = {fit}: a rank-r update of a {d_out} × "
                "{d_in} matrix cannot have r above that, got {rank}: lower rank to {fit}",
                {"fit": min(d_in, d_out), "d_in": d_in, "d_out": d_out, "rank": rank},
            )
        return rank

    @field_validator("steps")
    @classmethod
    def _training_within_budget(cls, steps: int, info: ValidationInfo) -> int:
        d_in, d_out, tokens = (info.data.get(name) for name in ("d_in", "d_out", "tokens"))
        if d_in is None or d_out is None or tokens is None:
            return steps
        if d_in * d_out * tokens * steps > MAX_WORK:
            fit = MAX_WORK // (d_in * d_out * tokens)
            fix = f"lower steps to {fit} or less" if fit >= 1 else "lower tokens or d_in × d_out"
            raise PydanticCustomError(
                "budget",
                "d_in × d_out × tokens × steps must be at most {limit} to keep one request under "
                "2 s, got {d_in} × {d_out} × {tokens} × {steps}: {fix}",
                {
                    "limit": f"{MAX_WORK:,}",
                    "d_in": d_in,
                    "d_out": d_out,
                    "tokens": tokens,
                    "steps": steps,
                    "fix": fix,
                },
            )
        return steps


LORA = DemoSpec(
    name="lora",
    version=1,
    title="LoRA: trainable parameters, an exact merge, and QLoRA memory",
    description="Adds a rank-r LoRA adapter to a real nn.Linear in float64, checks that it "
    "starts as the identity and that merging W + (α/r)BA after a few Adam steps gives the same "
    "output, then counts LoRA parameters on a released Llama config built on the meta device "
    "and sizes its QLoRA base (NF4 with double quantization).",
    params=LoraParams,
    outputs={
        "layer_params": "d·k: weights of the frozen nn.Linear (no bias).",
        "trainable_params": "Parameters that require a gradient after wrapping: A (r × k) and "
        "B (d × r).",
        "trainable_fraction": "trainable_params / layer_params.",
        "scaling": "The factor on BAx: alpha / r, or alpha / sqrt(r) with rslora.",
        "init_max_abs_diff": "Largest difference between the adapted and the base layer's "
        "outputs before training (B = 0).",
        "loss_start": "Mean squared error to the target before the first step.",
        "loss_end": "Mean squared error after the last step.",
        "adapter_max_abs_output": "Largest entry of the adapter's contribution (scaling · BAx) "
        "after training, for scale.",
        "merge_max_abs_diff": "Largest difference between the merged nn.Linear (W + scaling · "
        "BA) and the adapter path, on fresh inputs.",
        "delta_rank": "Rank of the learned update BA (at most r).",
        "model_params": "Parameters of the chosen model, counted on the meta device.",
        "model_lora_params": "LoRA parameters over the adapted projections of every block, "
        "counted on the meta device.",
        "model_lora_percent": "model_lora_params as a percentage of model_params.",
        "adapter_file_mb": "model_lora_params × 2 bytes (bf16), in MB (10⁶ bytes).",
        "quantized_params": "Weights of every block's linear layers: what QLoRA stores in NF4.",
        "nf4_bits_per_param": "Bits per quantized weight: 4-bit codes plus first- and second-"
        "level constants, from the sizes of the stored tensors.",
        "nf4_single_quant_bits_per_param": "The same without double quantization: 4 bits plus "
        "one fp32 constant per 64 weights.",
        "bf16_base_gb": "The whole model in bf16: 2 bytes per parameter, in GB (10⁹ bytes).",
        "qlora_base_gb": "Block linear layers in NF4 with double quantization, the rest "
        "(embeddings, output head, norms) in bf16, in GB.",
        "double_quant_saving_gb": "What double quantization saves on the quantized weights, in GB.",
        "adapter_train_state_gb": "LoRA weights and gradients in bf16 and Adam's two fp32 "
        "moments: 12 bytes per LoRA parameter, in GB.",
        "full_finetune_state_gb": "Full fine-tuning with mixed-precision Adam: 16 bytes per "
        "parameter (ZeRO §3.1), in GB.",
    },
    worst_cases=(
        {
            "d_in": 2048,
            "d_out": 2048,
            "rank": 256,
            "tokens": 256,
            "steps": 1,
            "model": "llama3_1_70b",
            "targets": "all_linear",
        },
        {
            "d_in": 256,
            "d_out": 256,
            "rank": 256,
            "tokens": 1024,
            "steps": 16,
            "model": "llama3_1_70b",
            "targets": "all_linear",
        },
    ),
)

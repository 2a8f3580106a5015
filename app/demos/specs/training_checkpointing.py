"""``activation_checkpointing``: memory kept for backward and compute, with and without checkpoints.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_checkpointing.py``. No torch here.
"""

import math
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec

Block = Literal["linear_gelu", "prenorm_mlp"]

BLOCK_WEIGHTS: dict[str, int] = {"linear_gelu": 1, "prenorm_mlp": 8}
"""Matrix weights per block, in units of d²: Linear(d, d); Linear(d, 4d) and Linear(4d, d)."""

BLOCK_SAVED: dict[str, int] = {"linear_gelu": 2, "prenorm_mlp": 10}
"""Tensors of tokens × d a block keeps for backward, about (LayerNorm's statistics aside)."""

MAX_WEIGHTS = 2**23
"""Cap on layers × weights per block: 32 MiB of fp32 weights, as much again of gradients."""

MAX_SAVED = 2**23
"""Cap on the elements kept for backward without checkpointing: 32 MiB in fp32."""

MAX_WORK = 2**30
"""Cap on tokens × all weights: about 15 GFLOP for the runs with and without checkpoints."""


def _budget(message: str, values: dict[str, object]) -> PydanticCustomError:
    return PydanticCustomError("budget", message, values)


class CheckpointingParams(DemoParams):
    block: Block = Field(
        "linear_gelu",
        title="Block",
        description="linear_gelu: Linear(d, d) then GELU; prenorm_mlp: x + Linear(4d, d)(GELU("
        "Linear(d, 4d)(LayerNorm(x)))), a transformer block's feed-forward half.",
    )
    layers: int = Field(16, ge=1, le=64, title="Layers", description="Blocks in the stack.")
    d: int = Field(
        256,
        ge=8,
        le=1024,
        title="Width d",
        description=f"Width of the blocks; layers × weights per block may be at most "
        f"{MAX_WEIGHTS:,}.",
    )
    tokens: int = Field(
        64,
        ge=1,
        le=8192,
        title="Tokens",
        description="Rows of the batch (batch × sequence) that go through the stack.",
    )
    blocks_per_segment: int = Field(
        1,
        ge=1,
        le=64,
        title="Blocks per segment",
        description="Blocks in each checkpointed segment (1: a checkpoint per block); it must "
        "divide layers.",
    )

    @field_validator("d")
    @classmethod
    def _weights_within_budget(cls, d: int, info: ValidationInfo) -> int:
        block, layers = info.data.get("block"), info.data.get("layers")
        if block is None or layers is None:
            return d
        per_layer = BLOCK_WEIGHTS[block]
        if layers * per_layer * d * d > MAX_WEIGHTS:
            fit = math.isqrt(MAX_WEIGHTS // (layers * per_layer))
            raise _budget(
                "layers × weights per block ({per_layer} × d²) must be at most {limit} to keep "
                "one request small, got {layers} × {weights}: lower d to {fit} or less",
                {
                    "per_layer": per_layer,
                    "limit": f"{MAX_WEIGHTS:,}",
                    "layers": layers,
                    "weights": per_layer * d * d,
                    "fit": fit,
                },
            )
        return d

    @field_validator("tokens")
    @classmethod
    def _work_within_budget(cls, tokens: int, info: ValidationInfo) -> int:
        block, layers, d = (info.data.get(name) for name in ("block", "layers", "d"))
        if not (isinstance(block, str) and isinstance(layers, int) and isinstance(d, int)):
            return tokens
        saved = layers * d * BLOCK_SAVED[block]
        weights = layers * d * d * BLOCK_WEIGHTS[block]
        fit = min(MAX_SAVED // saved, MAX_WORK // weights)
        if tokens > fit:
            raise _budget(
                "tokens × d × layers × {kept} (the activations kept) must be at most {saved_cap} "
                "and tokens × all weights at most {work_cap} to keep one request under 2 s, got "
                "{tokens} tokens: lower tokens to {fit} or less",
                {
                    "kept": BLOCK_SAVED[block],
                    "saved_cap": f"{MAX_SAVED:,}",
                    "work_cap": f"{MAX_WORK:,}",
                    "tokens": tokens,
                    "fit": fit,
                },
            )
        return tokens

    @field_validator("blocks_per_segment")
    @classmethod
    def _divides_layers(cls, blocks_per_segment: int, info: ValidationInfo) -> int:
        layers = info.data.get("layers")
        if layers is not None and layers % blocks_per_segment:
            raise PydanticCustomError(
                "segments",
                "blocks_per_segment must divide layers ({layers}) so the segments are equal, "
                "got {blocks_per_segment}",
                {"layers": layers, "blocks_per_segment": blocks_per_segment},
            )
        return blocks_per_segment


ACTIVATION_CHECKPOINTING = DemoSpec(
    name="activation_checkpointing",
    version=1,
    title="Activation checkpointing: memory kept for backward against recomputation",
    description="Trains a stack of blocks for one step with and without "
    "torch.utils.checkpoint, counts the bytes autograd keeps for backward with "
    "saved_tensors_hooks, the peak memory, the forward calls and FLOPs, and compares the "
    "gradients.",
    params=CheckpointingParams,
    outputs={
        "activation_bytes": "Bytes of one tokens × d fp32 tensor (a block's input): the unit of "
        "the outputs counted in activations.",
        "saved_bytes_without": "Bytes of the tensors autograd keeps for backward, no "
        "checkpointing (weights excluded, each storage once).",
        "saved_bytes_with": "The same with checkpointing: the segments' inputs.",
        "saved_without": "saved_bytes_without in activations.",
        "saved_with": "saved_bytes_with in activations.",
        "block_saved": "segment_saved / blocks_per_segment: what one block keeps for backward, "
        "in activations.",
        "segment_saved": "What one segment keeps when run without a checkpoint, in "
        "activations: what the backward pass rebuilds at a time.",
        "peak_without": "Peak memory of the tensors the training step creates (activations, "
        "their gradients, temporaries), no checkpointing, in activations.",
        "peak_with": "The same with checkpointing.",
        "peak_saving": "peak_without − peak_with, in activations.",
        "linear_calls_without": "Linear layers' forward calls in the step, no checkpointing.",
        "linear_calls_with": "The same with checkpointing, recomputation included.",
        "flops_without": "Matrix-multiply FLOPs of forward and backward (FlopCounterMode's "
        "formulas), no checkpointing.",
        "flops_with": "The same with checkpointing.",
        "recompute_share": "(flops_with − flops_without) / forward FLOPs: the share of a forward "
        "pass recomputed.",
        "max_grad_difference": "Largest absolute difference between any gradient with and "
        "without checkpointing.",
    },
    worst_cases=(
        {"block": "linear_gelu", "layers": 8, "d": 1024, "tokens": 128, "blocks_per_segment": 8},
        {"block": "prenorm_mlp", "layers": 16, "d": 256, "tokens": 128, "blocks_per_segment": 16},
        {"block": "linear_gelu", "layers": 64, "d": 64, "tokens": 1024, "blocks_per_segment": 64},
    ),
)

"""``online_softmax`` and ``stable_softmax``: computing softmax without overflow, block by block.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/softmax.py``. No torch here.
"""

import math
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_BLOCKS = 2048


"""Cap on keys / block_size: the Python loop costs tens of µs per block."""


class OnlineSoftmaxParams(DemoParams):
    keys: int = Field(4096, ge=1, le=32_768, title="Keys", description="Keys (sequence length).")
    block_size: int = Field(
        128,
        ge=1,
        le=32_768,
        title="Block size",
        description=f"Keys per block; keys / block size may be at most {MAX_BLOCKS}.",
    )
    d: int = Field(128, ge=1, le=128, title="d", description="Head dimension.")
    queries: int = Field(16, ge=1, le=64, title="Queries", description="Queries (rows).")
    dtype: Literal["float32", "float64"] = Field(
        "float32", title="Precision", description="Precision of both computations."
    )
    seed: Seed = 0

    @field_validator("block_size")
    @classmethod
    def _few_enough_blocks(cls, block_size: int, info: ValidationInfo) -> int:
        keys = info.data.get("keys")
        if keys is not None and math.ceil(keys / block_size) > MAX_BLOCKS:
            raise PydanticCustomError(
                "budget",
                "keys / block_size may be at most {limit} blocks, got {keys} / {block_size}: "
                "raise block_size to {fit} or more",
                {
                    "limit": MAX_BLOCKS,
                    "keys": keys,
                    "block_size": block_size,
                    "fit": math.ceil(keys / MAX_BLOCKS),
                },
            )
        return block_size


class StableSoftmaxParams(DemoParams):
    offset: float = Field(
        100.0,
        ge=-60_000.0,
        le=60_000.0,
        title="Offset",
        description="Added to every logit; softmax should not change. Bounded so fp16 can hold it.",
    )
    spread: float = Field(
        10.0,
        ge=0.0,
        le=1000.0,
        title="Spread",
        description="Logits run from offset − spread to offset.",
    )
    keys: int = Field(8, ge=2, le=4096, title="Keys", description="Number of logits.")
    dtype: Literal["float16", "bfloat16", "float32", "float64"] = Field(
        "float32", title="Precision", description="Precision of the logits and the softmax."
    )


ONLINE_SOFTMAX = DemoSpec(
    name="online_softmax",
    version=1,
    title="Online (FlashAttention-style) softmax",
    description="Attention computed one key block at a time with a running max and sum "
    "equals the full softmax up to rounding.",
    params=OnlineSoftmaxParams,
    outputs={
        "max_abs_diff": "Largest difference between online and full attention outputs.",
        "logsumexp_diff": "Largest difference between online and full log-sum-exp of a row.",
        "blocks": "Number of key blocks.",
        "mean_max_updates": "Mean number of blocks, after the first, that raised a row's max.",
    },
    worst_cases=(
        {"keys": 32_768, "block_size": 16, "d": 128, "queries": 64, "dtype": "float64"},
        {"keys": 32_768, "block_size": 32_768, "d": 128, "queries": 64, "dtype": "float64"},
    ),
)


STABLE_SOFTMAX = DemoSpec(
    name="stable_softmax",
    version=1,
    title="Why softmax subtracts the max",
    description="exp overflows in fp16 above 11.09 and in fp32 above 88.72: the naive softmax "
    "returns NaN where the max-subtracted one and logsumexp stay finite.",
    params=StableSoftmaxParams,
    outputs={
        "naive_nonfinite_share": "Share of naive weights that are NaN or infinite.",
        "naive_max_abs_error": "Largest error of the naive weights (only when all are finite).",
        "stable_max_abs_error": "Largest error of the max-subtracted softmax against exact "
        "(fp64) weights; large offsets in low precision lose digits in the logits themselves.",
        "logsumexp": "torch.logsumexp of the logits in the chosen precision.",
        "overflow_threshold": "ln(largest finite value): exp overflows above it.",
        "underflow_threshold": "ln(smallest subnormal value): exp rounds to 0 below about this.",
    },
    worst_cases=({"keys": 4096, "dtype": "float16", "offset": 60_000.0, "spread": 1000.0},),
)

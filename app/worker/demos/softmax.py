"""``online_softmax`` and ``stable_softmax``: computing softmax without overflow, block by block.

softmax(x) = softmax(x − c) for any c. Subtracting the row maximum keeps every
exponent at or below 0, so exp cannot overflow; ``logsumexp`` uses the same
trick. FlashAttention (Dao et al. 2022) goes one step further: it sees the keys
one block at a time, keeps a running maximum m and sum l, and rescales what it
has accumulated by exp(m_old − m_new) whenever the maximum grows, which gives
the full softmax exactly in exact arithmetic.
"""

import math
from typing import Literal

import torch
from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import DTYPES
from app.worker.device import seeded
from app.worker.params import DemoParams, Seed

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


def online_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Attention over key blocks with a running max and sum, as FlashAttention does.

    Returns:
        The output (queries × value dim), the log-sum-exp of each row, the
        running maximum after each block and each block's own maximum (both
        blocks × queries).
    """
    scale = 1 / math.sqrt(q.shape[-1])
    running_max = torch.full((len(q),), -math.inf, dtype=q.dtype, device=q.device)
    total = torch.zeros(len(q), dtype=q.dtype, device=q.device)
    out = torch.zeros(len(q), v.shape[-1], dtype=q.dtype, device=q.device)
    maxima, block_maxima = [], []
    for start in range(0, len(k), block_size):
        scores = q @ k[start : start + block_size].T * scale
        block_max = scores.amax(dim=-1)
        new_max = torch.maximum(running_max, block_max)
        # What was summed so far was relative to the old maximum: rescale it.
        rescale = torch.exp(running_max - new_max)
        weights = torch.exp(scores - new_max[:, None])
        total = total * rescale + weights.sum(dim=-1)
        out = out * rescale[:, None] + weights @ v[start : start + block_size]
        running_max = new_max
        maxima.append(new_max)
        block_maxima.append(block_max)
    return (
        out / total[:, None],
        running_max + total.log(),
        torch.stack(maxima),
        torch.stack(block_maxima),
    )


def compute_online(params: OnlineSoftmaxParams, device: torch.device) -> Outcome:
    """Compare block-wise online softmax attention with the full softmax, in one precision."""
    dtype = DTYPES[params.dtype]
    generator = seeded(device, params.seed)

    def draw(rows: int) -> torch.Tensor:
        return torch.randn(rows, params.d, generator=generator, dtype=dtype, device=device)

    q, k, v = draw(params.queries), draw(params.keys), draw(params.keys)
    out, lse, maxima, block_maxima = online_attention(q, k, v, params.block_size)
    scores = q @ k.T / math.sqrt(params.d)
    full = torch.softmax(scores, dim=-1) @ v
    blocks = len(maxima)
    updates = (maxima[1:] > maxima[:-1]).sum(dim=0).double().mean().item() if blocks > 1 else 0.0
    x = list(range(blocks))
    return Outcome(
        outputs={
            "max_abs_diff": (out - full).abs().max().item(),
            "logsumexp_diff": (lse - torch.logsumexp(scores, dim=-1)).abs().max().item(),
            "blocks": float(blocks),
            "mean_max_updates": updates,
        },
        theory={"max_abs_diff": 0.0, "logsumexp_diff": 0.0},
        series=[
            Series(
                name="running max",
                kind="line",
                x=x,
                y=maxima[:, 0].tolist(),
                x_label="block",
                y_label="max score seen (query 0)",
            ),
            Series(
                name="block max",
                kind="line",
                x=x,
                y=block_maxima[:, 0].tolist(),
                x_label="block",
                y_label="max score seen (query 0)",
            ),
        ],
        notes=["theory is exact equality; the difference is floating-point rounding"],
    )


def compute_stable(params: StableSoftmaxParams, device: torch.device) -> Outcome:
    """Naive exp(x)/Σexp(x) against the max-subtracted softmax and logsumexp."""
    dtype = DTYPES[params.dtype]
    base = params.spread * torch.linspace(-1, 0, params.keys, dtype=torch.float64, device=device)
    exact = torch.softmax(base, dim=-1)  # softmax ignores the offset, so this is the truth
    logits = (base + params.offset).to(dtype)
    naive = logits.exp() / logits.exp().sum()
    stable = torch.softmax(logits, dim=-1)
    finite = bool(naive.isfinite().all())
    info = torch.finfo(dtype)
    outputs = {
        "naive_nonfinite_share": (~naive.isfinite()).double().mean().item(),
        "stable_max_abs_error": (stable.double() - exact).abs().max().item(),
        "logsumexp": torch.logsumexp(logits, dim=-1).item(),
        "overflow_threshold": math.log(info.max),
        "underflow_threshold": math.log(info.tiny * info.eps),
    }
    if finite:
        outputs["naive_max_abs_error"] = (naive.double() - exact).abs().max().item()
    return Outcome(
        outputs=outputs,
        theory={
            "naive_nonfinite_share": 0.0,
            "logsumexp": params.offset + torch.logsumexp(base, dim=-1).item(),
        },
        series=[
            Series(
                name=f"stable softmax ({params.dtype})",
                kind="bar",
                x=list(range(params.keys)),
                y=stable.double().tolist(),
                x_label="key",
                y_label="weight",
            ),
            Series(
                name="exact",
                kind="bar",
                x=list(range(params.keys)),
                y=exact.tolist(),
                x_label="key",
                y_label="weight",
            ),
        ],
        notes=[]
        if finite
        else [
            f"naive exp overflowed or underflowed in {params.dtype}: exp(x) is finite only for "
            f"x below {math.log(info.max):.2f}, and the sum is 0 when every x is below "
            f"{math.log(info.tiny * info.eps):.2f}"
        ],
    )


ONLINE_SOFTMAX = Demo(
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
    compute=compute_online,
    worst_cases=(
        {"keys": 32_768, "block_size": 16, "d": 128, "queries": 64, "dtype": "float64"},
        {"keys": 32_768, "block_size": 32_768, "d": 128, "queries": 64, "dtype": "float64"},
    ),
)

STABLE_SOFTMAX = Demo(
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
    compute=compute_stable,
    worst_cases=({"keys": 4096, "dtype": "float16", "offset": 60_000.0, "spread": 1000.0},),
)

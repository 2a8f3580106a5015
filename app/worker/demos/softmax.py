"""``online_softmax`` and ``stable_softmax``: computing softmax without overflow, block by block.

softmax(x) = softmax(x − c) for any c. Subtracting the row maximum keeps every
exponent at or below 0, so exp cannot overflow; ``logsumexp`` uses the same
trick. FlashAttention (Dao et al. 2022) goes one step further: it sees the keys
one block at a time, keeps a running maximum m and sum l, and rescales what it
has accumulated by exp(m_old − m_new) whenever the maximum grows, which gives
the full softmax exactly in exact arithmetic.
"""

import math

import torch

from app.demos.specs import softmax as spec
from app.demos.specs.softmax import OnlineSoftmaxParams, StableSoftmaxParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import DTYPES
from app.worker.device import seeded


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


ONLINE_SOFTMAX = Demo(spec=spec.ONLINE_SOFTMAX, compute=compute_online)

STABLE_SOFTMAX = Demo(spec=spec.STABLE_SOFTMAX, compute=compute_stable)

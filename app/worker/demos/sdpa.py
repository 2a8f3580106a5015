"""``sdpa``: what PyTorch's ``scaled_dot_product_attention`` divides by, and its causal mask.

The default scale is 1/sqrt(E) with E = query.size(-1), the query (and key)
head dimension, not the value dimension. ``is_causal=True`` builds a top-left
aligned mask, ``ones(L, S).tril()``: with one query against a cache of S keys
(decoding) that mask lets the query see key 0 only, so the output is v[0]. A
decoder needs the bottom-right alignment, ``ones(L, S).tril(S − L)``, which for
L = 1 masks nothing.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import sdpa as spec
from app.demos.specs.sdpa import SdpaParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded


def compute(params: SdpaParams, device: torch.device) -> Outcome:
    """Check SDPA's default scale and its causal mask against a manual softmax (fp64)."""
    generator = seeded(device, params.seed)

    def draw(rows: int, dim: int) -> torch.Tensor:
        # (batch, heads, rows, dim) with batch = heads = 1, the layout SDPA documents.
        return torch.randn(1, 1, rows, dim, generator=generator, dtype=torch.float64, device=device)

    q, k = draw(params.queries, params.query_dim), draw(params.keys, params.query_dim)
    v = draw(params.keys, params.value_dim)
    default = F.scaled_dot_product_attention(q, k, v)
    by_query_dim = torch.softmax(q @ k.mT / math.sqrt(params.query_dim), dim=-1) @ v
    by_value_dim = torch.softmax(q @ k.mT / math.sqrt(params.value_dim), dim=-1) @ v

    # Decoding: one new query against a cache of decode_keys keys.
    s = params.decode_keys
    q1, cache_k, cache_v = (
        draw(1, params.query_dim),
        draw(s, params.query_dim),
        draw(s, params.value_dim),
    )
    causal = F.scaled_dot_product_attention(q1, cache_k, cache_v, is_causal=True)
    unmasked = F.scaled_dot_product_attention(q1, cache_k, cache_v)
    bottom_right = torch.ones(1, s, dtype=torch.bool, device=device).tril(diagonal=s - 1)
    aligned = F.scaled_dot_product_attention(q1, cache_k, cache_v, attn_mask=bottom_right)
    weights = torch.softmax(q1 @ cache_k.mT / math.sqrt(params.query_dim), dim=-1)[0, 0, 0]
    top_left = torch.zeros(s, dtype=torch.float64)
    top_left[0] = 1.0  # tril of ones(1, S) keeps column 0 only

    def gap(a: torch.Tensor, b: torch.Tensor) -> float:
        return (a - b).abs().max().item()

    return Outcome(
        outputs={
            "default_scale": 1 / math.sqrt(params.query_dim),
            "default_vs_query_dim": gap(default, by_query_dim),
            "default_vs_value_dim": gap(default, by_value_dim),
            "causal_decode_vs_first_value": gap(causal[0, 0, 0], cache_v[0, 0, 0]),
            "causal_decode_vs_full": gap(causal, unmasked),
            "bottom_right_decode_vs_full": gap(aligned, unmasked),
        },
        theory={
            "default_scale": 1 / math.sqrt(params.query_dim),
            "default_vs_query_dim": 0.0,
            "causal_decode_vs_first_value": 0.0,
            "bottom_right_decode_vs_full": 0.0,
        },
        series=[
            Series(
                name="is_causal=True (top-left mask)",
                kind="bar",
                x=list(range(s)),
                y=top_left.tolist(),
                x_label="cached key",
                y_label="attention weight of the new query",
            ),
            Series(
                name="correct for decoding (no mask)",
                kind="bar",
                x=list(range(s)),
                y=weights.tolist(),
                x_label="cached key",
                y_label="attention weight of the new query",
            ),
        ],
        notes=[
            f"torch {torch.__version__}: default scale 1/sqrt(query.size(-1)); is_causal=True "
            "aligns the mask top-left, so decoding needs an explicit mask "
            "(or torch.nn.attention.bias.causal_lower_right)."
        ],
    )


SDPA = Demo(spec=spec.SDPA, compute=compute)

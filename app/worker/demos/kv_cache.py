"""``kv_cache``: what the K and V cache costs per token, with and without GQA.

Each layer caches one key and one value vector per KV head per token:
2 × layers × kv_heads × head_dim × bytes per value. Grouped-query attention
(Ainslie et al. 2023) shares each KV head between several query heads, which
divides the cache by query_heads / kv_heads. Llama 3 70B in bf16: 2 · 80 · 8 ·
128 · 2 B = 327,680 B per token, 2.5 MiB with one KV head per query head.
"""

import torch

from app.demos.specs import kv_cache as spec
from app.demos.specs.kv_cache import KvCacheParams
from app.worker.demo import Demo, Outcome, Series

GIB = 2**30
CONTEXTS = [2**k for k in range(10, 18)]  # 1k to 128k tokens


def compute_kv_cache(params: KvCacheParams, device: torch.device) -> Outcome:
    """2 (K and V) × layers × kv_heads × head_dim × bytes, per token."""

    def per_token(heads: int) -> float:
        return 2 * params.layers * heads * params.head_dim * params.bytes_per_value

    gqa, mha = per_token(params.kv_heads), per_token(params.query_heads)
    sequences = params.tokens * params.batch
    return Outcome(
        outputs={
            "bytes_per_token": gqa,
            "mha_bytes_per_token": mha,
            "gqa_ratio": params.query_heads / params.kv_heads,
            "total_gib": gqa * sequences / GIB,
            "mha_total_gib": mha * sequences / GIB,
        },
        series=[
            Series(
                name=name,
                kind="line",
                x=CONTEXTS,
                y=[size * tokens * params.batch / GIB for tokens in CONTEXTS],
                x_label="tokens per sequence",
                y_label="KV cache (GiB)",
            )
            for name, size in (
                (f"{params.kv_heads} KV heads", gqa),
                (f"MHA, {params.query_heads} heads", mha),
            )
        ],
    )


KV_CACHE = Demo(spec=spec.KV_CACHE, compute=compute_kv_cache)

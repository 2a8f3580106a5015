"""``kv_cache``: what the K and V cache costs per token, with and without GQA.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/kv_cache.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec


class KvCacheParams(DemoParams):
    layers: int = Field(80, ge=1, le=512, title="Layers", description="Transformer layers.")
    query_heads: int = Field(
        64, ge=1, le=1024, title="Query heads", description="For the MHA comparison."
    )
    kv_heads: int = Field(8, ge=1, le=1024, title="KV heads", description="Key/value heads (GQA).")
    head_dim: int = Field(128, ge=1, le=1024, title="Head dim", description="Per-head dimension.")
    bytes_per_value: float = Field(
        2.0,
        ge=0.5,
        le=8.0,
        title="Bytes per value",
        description="2 for bf16/fp16, 1 for fp8, 0.5 for int4.",
    )
    tokens: int = Field(
        8192, ge=1, le=10_000_000, title="Tokens", description="Cached tokens per sequence."
    )
    batch: int = Field(1, ge=1, le=4096, title="Batch", description="Sequences cached at once.")

    @field_validator("kv_heads")
    @classmethod
    def _divides_query_heads(cls, kv_heads: int, info: ValidationInfo) -> int:
        query_heads = info.data.get("query_heads")
        if query_heads is not None and query_heads % kv_heads:
            raise PydanticCustomError(
                "gqa",
                "kv_heads must divide query_heads ({query_heads}) so each KV head serves the same "
                "number of query heads, got {kv_heads}",
                {"query_heads": query_heads, "kv_heads": kv_heads},
            )
        return kv_heads


KV_CACHE = DemoSpec(
    name="kv_cache",
    version=1,
    title="KV cache size",
    description="Bytes the K and V cache takes per token, with grouped-query attention and "
    "without (MHA).",
    params=KvCacheParams,
    outputs={
        "bytes_per_token": "2 × layers × kv_heads × head_dim × bytes per value.",
        "mha_bytes_per_token": "The same with one KV head per query head (MHA).",
        "gqa_ratio": "query_heads / kv_heads: how much GQA saves.",
        "total_gib": "Cache for tokens × batch, in GiB.",
        "mha_total_gib": "The same without GQA.",
    },
    uses_device=False,
    worst_cases=({"tokens": 10_000_000, "batch": 4096},),
)

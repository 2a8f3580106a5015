"""``llama_params``: a Llama-style model's parameters and training FLOPs, counted on ``meta``.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_llama.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec


class LlamaConfigParams(DemoParams):
    """A Llama-style model's config fields, Llama-2-7B's by default (reused by ``zero_memory``)."""

    vocab: int = Field(
        32_000,
        ge=2,
        le=262_144,
        title="Vocabulary",
        description="vocab_size: rows of the embedding.",
    )
    hidden: int = Field(
        4096, ge=8, le=16_384, title="Hidden size", description="hidden_size (d_model)."
    )
    intermediate: int = Field(
        11_008,
        ge=1,
        le=65_536,
        title="Intermediate size",
        description="intermediate_size: width of the SwiGLU MLP.",
    )
    layers: int = Field(32, ge=1, le=256, title="Layers", description="num_hidden_layers.")
    heads: int = Field(
        32,
        ge=1,
        le=256,
        title="Query heads",
        description="num_attention_heads; must divide the hidden size (head_dim = hidden / heads).",
    )
    kv_heads: int = Field(
        32,
        ge=1,
        le=256,
        title="KV heads",
        description="num_key_value_heads; must divide the query heads (fewer = GQA).",
    )
    tie_embeddings: bool = Field(
        False,
        title="Tie embeddings",
        description="tie_word_embeddings: the output head reuses the embedding matrix.",
    )

    @field_validator("heads")
    @classmethod
    def _heads_divide_hidden(cls, heads: int, info: ValidationInfo) -> int:
        hidden = info.data.get("hidden")
        if hidden is not None and hidden % heads:
            raise PydanticCustomError(
                "head_dim",
                "heads must divide hidden ({hidden}) so that head_dim = hidden / heads is a whole "
                "number, got {heads}",
                {"hidden": hidden, "heads": heads},
            )
        return heads

    @field_validator("kv_heads")
    @classmethod
    def _kv_heads_divide_heads(cls, kv_heads: int, info: ValidationInfo) -> int:
        heads = info.data.get("heads")
        if heads is not None and heads % kv_heads:
            raise PydanticCustomError(
                "gqa",
                "kv_heads must divide heads ({heads}) so each KV head serves the same number of "
                "query heads, got {kv_heads}",
                {"heads": heads, "kv_heads": kv_heads},
            )
        return kv_heads


class LlamaParamsParams(LlamaConfigParams):
    seq_len: int = Field(
        4096,
        ge=1,
        le=131_072,
        title="Sequence length",
        description="Tokens in the sequence whose forward and backward pass is counted.",
    )


LARGEST_CONFIG: dict[str, object] = {
    "vocab": 262_144,
    "hidden": 16_384,
    "intermediate": 65_536,
    "layers": 256,
    "heads": 256,
    "kv_heads": 1,
    "tie_embeddings": True,
}
"""The largest model the config fields allow: the worst case of every demo that builds one."""


LLAMA_PARAMS = DemoSpec(
    name="llama_params",
    version=1,
    title="Parameters and training FLOPs of a Llama-style model",
    description="Builds a Llama-style config on the meta device (no memory), counts its "
    "parameters and the FLOPs of one training step per token.",
    params=LlamaParamsParams,
    outputs={
        "params": "Parameters of the model (a tied matrix counted once).",
        "embedding_params": "vocab × hidden: the input embedding.",
        "head_params": "vocab × hidden for an untied output head, 0 when tied.",
        "layer_params": "Parameters of one block (attention, MLP, two RMSNorms).",
        "attention_params": "q, k, v, o projections of one block.",
        "mlp_params": "gate, up and down projections of one block.",
        "norm_params": "All RMSNorm weights (2 per block and the final one).",
        "matmul_params": "Weights used in matrix multiplications: every projection and the "
        "output head (the input embedding is a lookup).",
        "head_dim": "hidden / heads.",
        "bf16_gigabytes": "params × 2 bytes, in GB (10⁹ bytes).",
        "flops_per_token": "FLOPs of one forward and backward pass per token, as "
        "FlopCounterMode counts them.",
        "six_n_flops_per_token": "6 × matmul_params: the 6N rule without the attention term.",
        "attention_flops_share": "12 · layers · hidden · seq_len as a share of flops_per_token.",
    },
    uses_device=False,
    worst_cases=({**LARGEST_CONFIG, "seq_len": 131_072},),
)

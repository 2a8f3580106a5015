"""``architecture``: KV cache, MoE parameters, SwiGLU width and vocabulary share of real models.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/attention_architecture.py``. No torch here.

The model table (``MODELS``) holds each model's config fields, and where each
was read:

- ``llama_2_7b``: hidden 4096, intermediate 11008, 32 layers, 32 heads and KV
  heads, vocab 32000, untied, as the parameter-count card cites
  meta-llama/Llama-2-7b-hf ``config.json`` (not opened for this demo); the count
  built from them equals keras-hub's ``llama2_7b_en`` total, 6,738,415,616
  (``keras_hub/src/models/llama/llama_presets.py``), exactly.
- ``llama_3_8b``: meta-llama/llama3 ``Meta-Llama-3-8B-Instruct/params.json``
  (dim 4096, 32 layers, 32 heads, 8 KV heads, vocab 128256, multiple_of 1024,
  ffn_dim_multiplier 1.3, so the FFN width is 14336 by Llama's ``FeedForward``).
- ``mixtral_8x7b``: the Mixtral paper's Table 1 (arXiv:2401.04088: dim 4096,
  32 layers, head_dim 128, hidden_dim 14336, 32 heads, 8 KV heads, vocab 32000,
  8 experts, top-2), the same as transformers' ``MixtralConfig`` defaults;
  mistralai/mistral-inference ``moe_one_file_ref.py`` for the layout (gate
  without bias, separate ``tok_embeddings`` and ``output``, so untied).
- ``gemma_7b``: google/gemma_pytorch ``gemma/config.py`` ``get_config_for_7b``
  (hidden 3072, intermediate 24576, 28 layers, 16 heads and KV heads of 256,
  vocab 256000); its ``Sampler`` multiplies by the embedding matrix, so tied.
- ``deepseek_v3``: transformers ``DeepseekV3Config`` defaults (the model's own
  ``config.json`` was not opened) and deepseek-ai/DeepSeek-V3
  ``inference/model.py`` for the layout (hidden 7168, 61 layers of which the
  first 3 dense with intermediate 18432, 128 heads, MLA with q_lora_rank 1536,
  kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; 256 routed experts of 2048,
  8 per token, 1 shared; gate bias when dim is 7168; vocab 129280, untied); the
  counts reproduce the technical report's 671B total and 37B activated.
"""

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

ModelName = Literal["deepseek_v3", "mixtral_8x7b", "llama_2_7b", "llama_3_8b", "gemma_7b"]


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """The config fields the demo needs; MoE and MLA fields are zero when absent."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    tied: bool
    experts: int = 0  # routed experts per MoE layer (0: dense)
    experts_per_token: int = 0
    shared_experts: int = 0
    expert_intermediate: int = 0
    dense_layers: int = 0  # leading layers with a dense FFN in an MoE model
    q_lora_rank: int = 0  # MLA fields (kv_lora_rank 0: plain GQA/MHA)
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    gate_bias: bool = False  # DeepSeek-V3's gate has a bias when dim == 7168


MODELS: dict[str, ModelConfig] = {
    "llama_2_7b": ModelConfig(
        vocab=32_000, hidden=4096, layers=32, heads=32, kv_heads=32, head_dim=128,
        intermediate=11_008, tied=False,
    ),
    "llama_3_8b": ModelConfig(
        vocab=128_256, hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128,
        intermediate=14_336, tied=False,
    ),
    "mixtral_8x7b": ModelConfig(
        vocab=32_000, hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128,
        intermediate=14_336, tied=False, experts=8, experts_per_token=2,
        expert_intermediate=14_336,
    ),
    "gemma_7b": ModelConfig(
        vocab=256_000, hidden=3072, layers=28, heads=16, kv_heads=16, head_dim=256,
        intermediate=24_576, tied=True,
    ),
    "deepseek_v3": ModelConfig(
        vocab=129_280, hidden=7168, layers=61, heads=128, kv_heads=128, head_dim=128,
        intermediate=18_432, tied=False, experts=256, experts_per_token=8, shared_experts=1,
        expert_intermediate=2048, dense_layers=3, q_lora_rank=1536, kv_lora_rank=512,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, gate_bias=True,
    ),
}  # fmt: skip


class ArchitectureParams(DemoParams):
    model: ModelName = Field(
        "deepseek_v3",
        title="Model",
        description="Config whose KV cache, parameters and vocabulary are counted (fields from "
        "the model's config, paper or reference code).",
    )
    d_model: int = Field(
        4096,
        ge=8,
        le=16_384,
        title="d_model (SwiGLU)",
        description="Model width for the SwiGLU width calculator.",
    )
    multiple_of: int = Field(
        256,
        ge=1,
        le=4096,
        title="multiple_of",
        description="Llama's reference code rounds the SwiGLU width up to a multiple of this.",
    )
    ffn_dim_multiplier: float = Field(
        1.0,
        ge=0.5,
        le=4.0,
        title="ffn_dim_multiplier",
        description="Llama's extra factor on the SwiGLU width (1.3 for Llama 3 8B; 1 means none).",
    )
    experts: int = Field(
        8, ge=2, le=256, title="Experts N", description="Router outputs for the balancing loss."
    )
    top_k: int = Field(
        2, ge=1, le=8, title="Top-k", description="Experts each token is dispatched to."
    )
    tokens: int = Field(
        4096,
        ge=16,
        le=16_384,
        title="Tokens T",
        description="Random tokens routed by a freshly initialised router.",
    )
    router_skew: float = Field(
        0.0,
        ge=0.0,
        le=10.0,
        title="Router skew",
        description="Added to expert 0's router logit: 0 leaves the router as initialised, more "
        "sends more tokens to expert 0.",
    )
    seed: Seed = 0

    @field_validator("top_k")
    @classmethod
    def _top_k_below_experts(cls, top_k: int, info: ValidationInfo) -> int:
        experts = info.data.get("experts")
        if experts is not None and top_k > experts:
            raise PydanticCustomError(
                "top_k",
                "top_k must be at most experts ({experts}), got {top_k}",
                {"experts": experts, "top_k": top_k},
            )
        return top_k


ARCHITECTURE = DemoSpec(
    name="architecture",
    version=1,
    title="Architecture calculators: MLA cache, MoE parameters, SwiGLU width, vocabulary",
    description="Builds a real model's layers on the meta device from its config and counts what "
    "it caches per token and what it holds, all of it and per token; rounds a SwiGLU width as "
    "Llama's code does; and measures the Switch Transformer balancing loss on real router "
    "outputs.",
    params=ArchitectureParams,
    outputs={
        "cache_per_token_layer": "Values the model caches per token per layer: kv_lora_rank + "
        "qk_rope_head_dim for MLA, 2 × kv_heads × head_dim otherwise (read off the cached "
        "projections' output shapes).",
        "mha_cache_per_token_layer": "The same for multi-head attention with the model's heads: "
        "2 × heads × head_dim.",
        "cache_reduction_vs_mha": "mha_cache_per_token_layer / cache_per_token_layer.",
        "cache_kib_per_token": "Cache of one token over all layers in bf16, in KiB (1024 bytes).",
        "total_params": "Parameters of the model, counted on the meta device.",
        "active_params": "Parameters one token passes through: all but the routed experts it is "
        "not sent to.",
        "active_share": "active_params / total_params.",
        "total_billions": "total_params / 10⁹.",
        "active_billions": "active_params / 10⁹.",
        "embedding_params": "Parameters of the token embedding: vocab × hidden.",
        "lm_head_params": "Parameters of the output head: vocab × hidden when untied, 0 when "
        "tied to the embedding.",
        "vocab_share": "(embedding_params + lm_head_params) / total_params.",
        "swiglu_hidden": "SwiGLU width for d_model: int(2 · 4d / 3), times ffn_dim_multiplier, "
        "rounded up to multiple_of.",
        "swiglu_params": "Parameters of that SwiGLU MLP (gate, up, down; no bias).",
        "gelu_mlp_params": "Parameters of a 4d GELU MLP of the same d_model (two matrices).",
        "swiglu_over_gelu": "swiglu_params / gelu_mlp_params.",
        "balance_loss": "Switch Transformer loss N · Σ f_i · P_i (without α) of the random "
        "router: f_i the share of the T·k dispatches to expert i, P_i its mean probability.",
        "balance_loss_balanced": "The same loss for a router that sends token t to expert "
        "t mod N with symmetric probabilities: 1.",
        "max_load": "N × the largest f_i: 1 when every expert gets the same share.",
    },
    worst_cases=(
        {"model": "deepseek_v3", "experts": 256, "top_k": 8, "tokens": 16_384, "router_skew": 10.0},
        {"model": "deepseek_v3", "experts": 16, "top_k": 8, "tokens": 16_384, "d_model": 16_384},
    ),
)

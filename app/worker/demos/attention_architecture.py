"""``architecture``: MLA's latent cache, MoE active parameters, SwiGLU width, vocabulary share.

Every model is built from plain torch modules on the ``meta`` device (shapes,
no memory) with the layout of its reference code: token embedding; per layer
two RMSNorms, attention and an MLP; a final RMSNorm and an output head, tied to
the embedding or not.

- Attention is grouped-query (q, k, v, o without bias), or DeepSeek's
  multi-head latent attention (``inference/model.py``'s ``MLA``: ``wq_a`` →
  ``q_norm`` → ``wq_b``; ``wkv_a`` to kv_lora_rank + qk_rope_head_dim, whose
  output is what the absorbed implementation caches (``kv_cache`` and
  ``pe_cache``); ``kv_norm``; ``wkv_b``; ``wo``).
- The MLP is SwiGLU, or an MoE layer: a gate (with DeepSeek-V3's bias), routed
  experts and shared experts, each a SwiGLU of expert_intermediate.

Only one block of each kind is built: every layer of a kind is identical, so
the count is embedding + dense blocks + MoE blocks + norm + head, each block
counted once and multiplied. Active parameters drop the routed experts a token
is not sent to (experts − experts_per_token of them per MoE layer).

The balancing loss (Switch Transformer, Fedus et al. 2021, Eq. 4) is measured
on the outputs of a real ``nn.Linear`` router applied to random tokens:
softmax probabilities, top-k dispatch, f_i the share of the T·k dispatches
that go to expert i, P_i the mean probability of expert i, loss N · Σ f_i P_i.
"""

import torch
import torch.nn.functional as F
from torch import nn

from app.demos.specs import attention_architecture as spec
from app.demos.specs.attention_architecture import MODELS, ArchitectureParams, ModelConfig
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos.training_llama import SwiGLU, count_params

ROUTER_DIM = 64  # width of the random tokens the router sees
BF16_BYTES = 2

# --- the model -----------------------------------------------------------------------


class GroupedQueryAttention(nn.Module):
    """q, k, v, o without bias; k and v have kv_heads heads of head_dim."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        inner, kv = config.heads * config.head_dim, config.kv_heads * config.head_dim
        self.q_proj = nn.Linear(config.hidden, inner, bias=False)
        self.k_proj = nn.Linear(config.hidden, kv, bias=False)
        self.v_proj = nn.Linear(config.hidden, kv, bias=False)
        self.o_proj = nn.Linear(inner, config.hidden, bias=False)

    def cached(self, x: torch.Tensor) -> list[torch.Tensor]:
        """What a KV cache stores for the tokens ``x``: their keys and values."""
        return [self.k_proj(x), self.v_proj(x)]


class LatentAttention(nn.Module):
    """DeepSeek's MLA, named as in ``inference/model.py``."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        qk_head = config.qk_nope_head_dim + config.qk_rope_head_dim
        self.kv_lora_rank = config.kv_lora_rank
        self.wq_a = nn.Linear(config.hidden, config.q_lora_rank, bias=False)
        self.q_norm = nn.RMSNorm(config.q_lora_rank)
        self.wq_b = nn.Linear(config.q_lora_rank, config.heads * qk_head, bias=False)
        self.wkv_a = nn.Linear(
            config.hidden, config.kv_lora_rank + config.qk_rope_head_dim, bias=False
        )
        self.kv_norm = nn.RMSNorm(config.kv_lora_rank)
        self.wkv_b = nn.Linear(
            config.kv_lora_rank,
            config.heads * (config.qk_nope_head_dim + config.v_head_dim),
            bias=False,
        )
        self.wo = nn.Linear(config.heads * config.v_head_dim, config.hidden, bias=False)

    def cached(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The latent c_KV (kv_cache) and the shared rotary key (pe_cache) of the tokens ``x``."""
        latent, rope_key = self.wkv_a(x).split(
            [self.kv_lora_rank, self.wkv_a.out_features - self.kv_lora_rank], dim=-1
        )
        return [self.kv_norm(latent), rope_key]


class MoE(nn.Module):
    """A gate over routed experts, plus shared experts every token goes through."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.gate = nn.Linear(config.hidden, config.experts, bias=config.gate_bias)
        self.experts = nn.ModuleList(
            SwiGLU(config.hidden, config.expert_intermediate) for _ in range(config.experts)
        )
        self.shared_experts = nn.ModuleList(
            SwiGLU(config.hidden, config.expert_intermediate) for _ in range(config.shared_experts)
        )


class Block(nn.Module):
    """RMSNorm, attention, RMSNorm, MLP (dense SwiGLU or MoE)."""

    def __init__(self, config: ModelConfig, moe: bool) -> None:
        super().__init__()
        self.attention_norm = nn.RMSNorm(config.hidden)
        self.attention: GroupedQueryAttention | LatentAttention = (
            LatentAttention(config) if config.kv_lora_rank else GroupedQueryAttention(config)
        )
        self.ffn_norm = nn.RMSNorm(config.hidden)
        self.ffn: SwiGLU | MoE = MoE(config) if moe else SwiGLU(config.hidden, config.intermediate)


def count_model(config: ModelConfig) -> dict[str, int]:
    """Total and active parameters, embedding and head, from one block of each kind on meta."""
    moe_layers = config.layers - config.dense_layers if config.experts else 0
    with torch.device("meta"):
        embedding = nn.Embedding(config.vocab, config.hidden)
        head = nn.Linear(config.hidden, config.vocab, bias=False)
        norm = nn.RMSNorm(config.hidden)
        dense = Block(config, moe=False) if config.layers > moe_layers else None
        sparse = Block(config, moe=True) if moe_layers else None
    head_params = 0 if config.tied else count_params(head)
    outer = count_params(embedding) + head_params + count_params(norm)
    total = outer + (config.layers - moe_layers) * (count_params(dense) if dense else 0)
    active = total
    if sparse is not None:
        assert isinstance(sparse.ffn, MoE)
        per_layer = count_params(sparse)
        idle = config.experts - config.experts_per_token
        total += moe_layers * per_layer
        active += moe_layers * (per_layer - idle * count_params(sparse.ffn.experts[0]))
    return {
        "total": total,
        "active": active,
        "embedding": count_params(embedding),
        "head": head_params,
    }


def cache_per_token_layer(config: ModelConfig) -> tuple[int, int]:
    """Values cached per token per layer, and MHA's 2 · heads · head_dim, from output shapes.

    One token goes through the block's cached projections on the meta device;
    the MHA line builds the same attention with kv_heads = heads.
    """
    with torch.device("meta"):
        token = torch.empty(1, config.hidden)
        attention = Block(config, moe=False).attention
        cached = sum(t.numel() for t in attention.cached(token))
        hd = config.v_head_dim or config.head_dim
        mha_config = ModelConfig(
            vocab=1, hidden=config.hidden, layers=1, heads=config.heads,
            kv_heads=config.heads, head_dim=hd, intermediate=1, tied=False,
        )  # fmt: skip
        mha = sum(t.numel() for t in GroupedQueryAttention(mha_config).cached(token))
    return cached, mha


# --- SwiGLU width --------------------------------------------------------------------


def llama_ffn_width(dim: int, multiple_of: int, ffn_dim_multiplier: float) -> int:
    """``FeedForward``'s hidden size in meta-llama/llama ``llama/model.py`` (hidden_dim = 4·dim).

    Example:
        >>> llama_ffn_width(4096, 256, 1.0), llama_ffn_width(4096, 1024, 1.3)
        (11008, 14336)
    """
    hidden = int(2 * (4 * dim) / 3)
    hidden = int(ffn_dim_multiplier * hidden)  # Llama skips this when None; × 1.0 is the same
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def mlp_params(d_model: int, width: int) -> tuple[int, int]:
    """Parameters of a SwiGLU MLP of ``width`` and of a 4d GELU MLP, counted on meta."""
    with torch.device("meta"):
        swiglu = SwiGLU(d_model, width)
        gelu = nn.Sequential(
            nn.Linear(d_model, 4 * d_model, bias=False),
            nn.GELU(),
            nn.Linear(4 * d_model, d_model, bias=False),
        )
    return count_params(swiglu), count_params(gelu)


# --- load balancing ------------------------------------------------------------------


def balance_loss(probs: torch.Tensor, top_k: int) -> tuple[float, torch.Tensor]:
    """N · Σ f_i · P_i for router probabilities (tokens × N), and the shares f.

    Example:
        >>> p = torch.full((4, 2), 0.5); p[:, 0] += torch.tensor([0.1, 0.1, -0.1, -0.1])
        >>> round(balance_loss(p, 1)[0], 6)
        1.0
    """
    experts = probs.shape[-1]
    chosen = probs.topk(top_k, dim=-1).indices
    f = torch.bincount(chosen.flatten(), minlength=experts).double() / chosen.numel()
    p = probs.double().mean(dim=0)
    return float(experts * (f * p).sum()), f


def router_probs(params: ArchitectureParams, device: torch.device) -> torch.Tensor:
    """Softmax outputs of a freshly initialised router on random tokens, skew on expert 0."""
    generator = torch.Generator(device="cpu").manual_seed(params.seed)
    router = nn.Linear(ROUTER_DIM, params.experts, bias=False)
    bound = ROUTER_DIM**-0.5  # nn.Linear's default uniform bound for a = √5
    with torch.no_grad():
        router.weight.uniform_(-bound, bound, generator=generator)
    tokens = torch.randn(params.tokens, ROUTER_DIM, generator=generator)
    router, tokens = router.to(device), tokens.to(device)
    logits: torch.Tensor = router(tokens)
    logits[:, 0] += params.router_skew
    return logits.softmax(dim=-1)


def balanced_probs(experts: int, tokens: int) -> torch.Tensor:
    """A router whose logits for token t are a fixed decreasing vector rolled by t mod N.

    Token t's top-k experts are t, t + 1, ... (mod N); over a whole number of
    cycles (``tokens`` rounded up to a multiple of N) every expert gets the same
    share and the same mean probability.
    """
    levels = torch.linspace(4.0, 0.0, experts)
    router = nn.Linear(experts, experts, bias=False)
    with torch.no_grad():  # column j is the logit vector of an input one-hot at j
        router.weight.copy_(torch.stack([levels.roll(j) for j in range(experts)], dim=1))
    cycles = -(-tokens // experts)
    inputs = F.one_hot(torch.arange(cycles * experts) % experts, experts).float()
    logits: torch.Tensor = router(inputs)
    return logits.softmax(dim=-1)


# --- compute -------------------------------------------------------------------------


def compute(params: ArchitectureParams, device: torch.device) -> Outcome:
    """Count the model on meta, size a SwiGLU, and route random tokens."""
    config = MODELS[params.model]
    counts = count_model(config)
    cached, mha = cache_per_token_layer(config)
    width = llama_ffn_width(params.d_model, params.multiple_of, params.ffn_dim_multiplier)
    swiglu, gelu = mlp_params(params.d_model, width)
    loss, shares = balance_loss(router_probs(params, device).cpu(), params.top_k)
    balanced = balance_loss(balanced_probs(params.experts, params.tokens), params.top_k)[0]
    vocab_params = counts["embedding"] + counts["head"]
    outputs = {
        "cache_per_token_layer": float(cached),
        "mha_cache_per_token_layer": float(mha),
        "cache_reduction_vs_mha": mha / cached,
        "cache_kib_per_token": config.layers * cached * BF16_BYTES / 1024,
        "total_params": float(counts["total"]),
        "active_params": float(counts["active"]),
        "active_share": counts["active"] / counts["total"],
        "total_billions": counts["total"] / 1e9,
        "active_billions": counts["active"] / 1e9,
        "embedding_params": float(counts["embedding"]),
        "lm_head_params": float(counts["head"]),
        "vocab_share": vocab_params / counts["total"],
        "swiglu_hidden": float(width),
        "swiglu_params": float(swiglu),
        "gelu_mlp_params": float(gelu),
        "swiglu_over_gelu": swiglu / gelu,
        "balance_loss": loss,
        "balance_loss_balanced": balanced,
        "max_load": float(params.experts * shares.max()),
    }
    theory = {
        "cache_per_token_layer": float(
            config.kv_lora_rank + config.qk_rope_head_dim
            if config.kv_lora_rank
            else 2 * config.kv_heads * config.head_dim
        ),
        "mha_cache_per_token_layer": float(
            2 * config.heads * (config.v_head_dim or config.head_dim)
        ),
        "embedding_params": float(config.vocab * config.hidden),
        "lm_head_params": float(0 if config.tied else config.vocab * config.hidden),
        "swiglu_params": float(3 * params.d_model * width),
        "gelu_mlp_params": float(8 * params.d_model**2),
        "balance_loss_balanced": 1.0,
    }
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_series(shares, params),
        notes=_notes(params),
    )


def _series(shares: torch.Tensor, params: ArchitectureParams) -> list[Series]:
    models = list(MODELS)
    counted = [count_model(MODELS[name]) for name in models]
    return [
        Series(
            name="share of dispatches per expert",
            kind="bar",
            x=[str(i) for i in range(params.experts)],
            y=shares.tolist(),
            x_label="expert",
            y_label="f_i",
        ),
        Series(
            name="total parameters (billions)",
            kind="bar",
            x=models,
            y=[c["total"] / 1e9 for c in counted],
            x_label="model",
            y_label="billions",
        ),
        Series(
            name="active parameters per token (billions)",
            kind="bar",
            x=models,
            y=[c["active"] / 1e9 for c in counted],
            x_label="model",
            y_label="billions",
        ),
    ]


def _notes(params: ArchitectureParams) -> list[str]:
    notes = [
        "Counts follow each model's reference layout; DeepSeek-V3's multi-token-prediction "
        "module is not counted.",
        "The balancing loss leaves out the coefficient α it is multiplied by in training "
        "(transformers' MixtralConfig defaults router_aux_loss_coef to 0.001).",
    ]
    if params.model == "deepseek_v3":
        notes.append(
            "MLA's cache is the absorbed form (kv_cache + pe_cache of inference/model.py); its "
            "naive form caches full keys and values of 128 heads."
        )
    return notes


# --- the demo ------------------------------------------------------------------------

ARCHITECTURE = Demo(spec=spec.ARCHITECTURE, compute=compute)

"""``llama_params``: a Llama-style model's parameters and training FLOPs, counted on ``meta``.

The model is plain torch, no transformers: a token embedding, ``layers`` blocks
of RMSNorm → attention (q, k, v, o projections without bias; grouped-query
when kv_heads < heads) → RMSNorm → SwiGLU MLP (gate, up, down without bias),
a final RMSNorm and an output head, tied to the embedding or not. That is the
layout of Meta's ``llama/model.py`` and of transformers' ``LlamaForCausalLM``.
RoPE is left out: it has no parameters and no matrix multiplications.

Built on the ``meta`` device the model holds shapes but no memory, so a 70B
configuration costs what a small one does. ``sum(p.numel())`` over it gives
Llama-2-7B's 6,738,415,616 from its config (hidden 4096, intermediate 11008,
32 layers, 32 heads, vocab 32000, untied). ``FlopCounterMode`` then counts one
forward and backward pass of one sequence: 6 FLOPs per token for every weight
in a matrix multiplication, plus 12 · layers · hidden · seq_len for the
attention scores and their weighted sum (the ``6N + 12LHQT`` of PaLM,
Appendix B), with the full T × T products counted even though the mask is causal.
"""

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from app.demos.specs import training_llama as spec
from app.demos.specs.training_llama import LlamaConfigParams, LlamaParamsParams
from app.worker.demo import Demo, Outcome, Series

# --- parameters ----------------------------------------------------------------------


# --- the model -----------------------------------------------------------------------


class Attention(nn.Module):
    """q, k, v, o projections without bias; k and v have kv_heads heads (GQA)."""

    def __init__(self, hidden: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = x.shape

        def split(t: torch.Tensor, heads: int) -> torch.Tensor:
            return t.view(batch, tokens, heads, self.head_dim).transpose(1, 2)

        q = split(self.q_proj(x), self.heads)
        k = split(self.k_proj(x), self.kv_heads)
        v = split(self.v_proj(x), self.kv_heads)
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads
        )
        out: torch.Tensor = self.o_proj(y.transpose(1, 2).reshape(batch, tokens, -1))
        return out


class SwiGLU(nn.Module):
    """down(silu(gate(x)) · up(x)), no bias."""

    def __init__(self, hidden: int, intermediate: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return out


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then + mlp(norm(·))."""

    def __init__(self, hidden: int, intermediate: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden)
        self.self_attn = Attention(hidden, heads, kv_heads)
        self.post_attention_layernorm = nn.RMSNorm(hidden)
        self.mlp = SwiGLU(hidden, intermediate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x))
        out: torch.Tensor = x + self.mlp(self.post_attention_layernorm(x))
        return out


class LlamaStyle(nn.Module):
    """Embedding, blocks, final RMSNorm and output head (tied to the embedding or not)."""

    def __init__(self, params: LlamaConfigParams) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(params.vocab, params.hidden)
        self.layers = nn.ModuleList(
            Block(params.hidden, params.intermediate, params.heads, params.kv_heads)
            for _ in range(params.layers)
        )
        self.norm = nn.RMSNorm(params.hidden)
        self.lm_head = nn.Linear(params.hidden, params.vocab, bias=False)
        if params.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x)
        logits: torch.Tensor = self.lm_head(self.norm(x))
        return logits


def build_on_meta(params: LlamaConfigParams) -> LlamaStyle:
    """The model with every tensor on the meta device: shapes only, no memory.

    Call it where autograd is enabled (outside ``torch.inference_mode``) if the
    model is to run a backward pass.
    """
    with torch.device("meta"):
        return LlamaStyle(params)


def count_params(module: nn.Module) -> int:
    """Parameters of ``module``; a tied matrix is one parameter, counted once.

    Example:
        >>> count_params(nn.Linear(4096, 11008, bias=False))
        45088768
    """
    return sum(p.numel() for p in module.parameters())


def training_flops_per_token(params: LlamaParamsParams) -> float:
    """FLOPs of one forward and backward pass of one sequence, divided by its tokens.

    Every block has the same shapes, so FlopCounterMode runs a 1-block and a
    2-block copy of the config (about 12 ms a block otherwise) and the count is
    f(1) + (layers − 1) · (f(2) − f(1)): exact, not an estimate.
    """
    one, two = (
        _flops(build_on_meta(params.model_copy(update={"layers": n})), params) for n in (1, 2)
    )
    return (one + (params.layers - 1) * (two - one)) / params.seq_len


def _flops(model: LlamaStyle, params: LlamaParamsParams) -> int:
    tokens = torch.zeros(1, params.seq_len, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, params.vocab), tokens.view(-1))
        torch.autograd.backward(loss)
    return int(counter.get_total_flops())


def closed_form(params: LlamaParamsParams) -> dict[str, float]:
    """The counts written out from the config, independent of the model code.

    Example:
        >>> closed_form(LlamaParamsParams())["params"]
        6738415616
    """
    d, head_dim = params.hidden, params.hidden // params.heads
    attention = 2 * d * params.heads * head_dim + 2 * d * params.kv_heads * head_dim
    mlp = 3 * d * params.intermediate
    layer = attention + mlp + 2 * d  # two RMSNorm weight vectors
    head = 0 if params.tie_embeddings else params.vocab * d
    total = params.vocab * d + params.layers * layer + d + head
    matmul = params.layers * (attention + mlp) + params.vocab * d  # the head's matrix
    attention_flops = 12 * params.layers * d * params.seq_len
    return {
        "params": total,
        "layer_params": layer,
        "attention_params": attention,
        "mlp_params": mlp,
        "matmul_params": matmul,
        "flops_per_token": 6 * matmul + attention_flops,
        "attention_flops_per_token": attention_flops,
    }


# --- compute -------------------------------------------------------------------------


def compute(params: LlamaParamsParams, device: torch.device) -> Outcome:
    """Instantiate the config on ``meta``, count its parameters and one step's FLOPs."""
    del device  # shapes only: the meta device is the same everywhere
    theory = closed_form(params)
    with torch.inference_mode(False), torch.enable_grad():
        model = build_on_meta(params)
        total = count_params(model)
        block = cast(Block, model.layers[0])
        matmul = count_params(nn.ModuleList(m for m in model.modules() if isinstance(m, nn.Linear)))
        flops = training_flops_per_token(params)
    embedding = model.embed_tokens.weight.numel()
    head = 0 if params.tie_embeddings else model.lm_head.weight.numel()
    norms = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.RMSNorm))
    layers = params.layers
    attention, mlp = count_params(block.self_attn), count_params(block.mlp)
    return Outcome(
        outputs={
            "params": float(total),
            "embedding_params": float(embedding),
            "head_params": float(head),
            "layer_params": float(count_params(block)),
            "attention_params": float(attention),
            "mlp_params": float(mlp),
            "norm_params": float(norms),
            "matmul_params": float(matmul),
            "head_dim": float(params.hidden // params.heads),
            "bf16_gigabytes": total * 2 / 1e9,
            "flops_per_token": flops,
            "six_n_flops_per_token": 6.0 * matmul,
            # measured: what FlopCounterMode counts beyond 6 FLOPs per matmul weight
            "attention_flops_share": (flops - 6.0 * matmul) / flops,
        },
        theory={
            name: float(theory[name])
            for name in (
                "params",
                "layer_params",
                "attention_params",
                "mlp_params",
                "matmul_params",
                "flops_per_token",
            )
        },
        series=[
            Series(
                name="parameters by part",
                kind="bar",
                x=["embedding", "attention", "MLP", "norms", "output head"],
                y=[embedding, layers * attention, layers * mlp, norms, head],
                x_label="part",
                y_label="parameters",
            )
        ],
        notes=[
            "Counted on the meta device: every tensor has a shape and no storage.",
            "FLOPs from torch.utils.flop_counter.FlopCounterMode over one forward and backward "
            "pass of one sequence; it counts matrix multiplications only, and the full "
            "seq_len × seq_len attention products although the mask is causal.",
        ],
    )


# --- the demo ------------------------------------------------------------------------

LLAMA_PARAMS = Demo(spec=spec.LLAMA_PARAMS, compute=compute)

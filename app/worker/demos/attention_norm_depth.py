"""``norm_depth``: gradient norms with depth at initialisation, pre-norm against post-norm.

A stack of L residual layers, each a causal single-head attention sub-layer
(fused q/k/v projection, ``F.scaled_dot_product_attention``, output
projection) and a ReLU FFN (d → 4d → d), every matrix Xavier-normal with zero
bias and norm weight 1, the initialisation Xiong et al. 2020 describe in §3.3
(their theory simplifies further: d × d FFN matrices and zero query and key
weights, which this stack does not do). Two placements of the norm
(``torch.nn.LayerNorm`` or ``torch.nn.RMSNorm``, weight 1):

- post-norm (the original Transformer): x ← Norm(x + F(x)) after each sub-layer;
- pre-norm: x ← x + F(Norm(x)), with one more Norm before the output head.

Both stacks share their weights (the same draws), so only the placement
differs. The loss is cross-entropy of a random linear head over 32 classes
against random labels; the measurement is ‖∂L/∂W₂‖ of each layer's second FFN
matrix, the quantity of Xiong et al.'s Theorem 1 (for the last layer: of order
d·√(ln d) for post-norm whatever L, d·√(ln d / L) for pre-norm), averaged over
trials.
"""

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from app.demos.specs import attention_norm_depth as spec
from app.demos.specs.attention_norm_depth import NormDepthParams
from app.worker.demo import Demo, Outcome, Series

CLASSES = 32
EPS = 1e-5  # the same epsilon for both norms, so they can agree on zero-mean input

# --- the stack -----------------------------------------------------------------------


def xavier(rows: int, cols: int, generator: torch.Generator) -> nn.Linear:
    """nn.Linear(cols, rows) with Xavier-normal weights, std √(2 / (fan_in + fan_out)), bias 0."""
    layer = nn.Linear(cols, rows)
    with torch.no_grad():
        std = math.sqrt(2 / (rows + cols))
        layer.weight.copy_(torch.randn(rows, cols, generator=generator) * std)
        layer.bias.zero_()
    return layer


class Layer(nn.Module):
    """Causal single-head attention and a ReLU FFN, each a residual sub-layer with a norm."""

    def __init__(self, d: int, norm: Callable[[], nn.Module], generator: torch.Generator) -> None:
        super().__init__()
        self.qkv, self.out = xavier(3 * d, d, generator), xavier(d, d, generator)
        self.w1, self.w2 = xavier(4 * d, d, generator), xavier(d, 4 * d, generator)
        self.norm1, self.norm2 = norm(), norm()

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).unsqueeze(0).chunk(3, dim=-1)
        out: torch.Tensor = self.out(F.scaled_dot_product_attention(q, k, v, is_causal=True)[0])
        return out

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.w2(F.relu(self.w1(x)))
        return out

    def forward(self, x: torch.Tensor, pre: bool) -> torch.Tensor:
        if pre:
            x = x + self.attention(self.norm1(x))
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attention(x))
        out: torch.Tensor = self.norm2(x + self.ffn(x))
        return out


def make_norm(kind: str, d: int) -> Callable[[], nn.Module]:
    if kind == "rmsnorm":
        return lambda: nn.RMSNorm(d, eps=EPS)
    return lambda: nn.LayerNorm(d, eps=EPS)


def layer_grad_norms(
    params: NormDepthParams, seed: int, pre: bool, device: torch.device
) -> list[float]:
    """‖∂L/∂W₂‖ of every layer for one initialisation (drawn on the CPU from ``seed``)."""
    generator = torch.Generator().manual_seed(seed)
    norm = make_norm(params.norm, params.d)
    layers = [Layer(params.d, norm, generator).to(device) for _ in range(params.layers)]
    head, final = xavier(CLASSES, params.d, generator).to(device), norm().to(device)
    x = torch.randn(params.tokens, params.d, generator=generator).to(device)
    labels = torch.randint(CLASSES, (params.tokens,), generator=generator).to(device)
    h = x
    for layer in layers:
        h = layer(h, pre)
    if pre:
        h = final(h)
    logits: torch.Tensor = head(h)
    loss = F.cross_entropy(logits, labels)
    torch.autograd.backward(loss)
    return [float(layer.w2.weight.grad.norm()) for layer in layers]  # type: ignore[union-attr]


def norm_agreement(d: int, generator: torch.Generator) -> tuple[float, float]:
    """Largest |RMSNorm(x) − LayerNorm(x)|, for zero-mean x and for x with mean 1."""
    rms, layer = nn.RMSNorm(d, eps=EPS).double(), nn.LayerNorm(d, eps=EPS).double()
    x = torch.randn(256, d, generator=generator, dtype=torch.float64)
    centered = x - x.mean(dim=-1, keepdim=True)
    raw = centered + 1.0
    with torch.no_grad():
        return (
            float((rms(centered) - layer(centered)).abs().max()),
            float((rms(raw) - layer(raw)).abs().max()),
        )


# --- compute -------------------------------------------------------------------------


def compute(params: NormDepthParams, device: torch.device) -> Outcome:
    """Run both placements for every trial and average the per-layer gradient norms."""
    seeds = [params.seed * 1000 + t for t in range(params.trials)]
    with torch.inference_mode(False), torch.enable_grad():
        pre = _mean([layer_grad_norms(params, s, True, device) for s in seeds])
        post = _mean([layer_grad_norms(params, s, False, device) for s in seeds])
    centered, raw = norm_agreement(params.d, torch.Generator().manual_seed(params.seed))
    outputs = {
        "pre_first_grad": pre[0],
        "pre_last_grad": pre[-1],
        "post_first_grad": post[0],
        "post_last_grad": post[-1],
        "pre_last_over_first": pre[-1] / pre[0],
        "post_last_over_first": post[-1] / post[0],
        "post_over_pre_last": post[-1] / pre[-1],
        "rms_vs_layernorm_centered": centered,
        "rms_vs_layernorm_raw": raw,
    }
    layers = [float(i + 1) for i in range(params.layers)]
    series = [
        Series(
            name=name,
            kind="line",
            x=layers,
            y=values,
            x_label="layer",
            y_label="‖∂L/∂W₂‖ at init",
        )
        for name, values in (("pre-norm", pre), ("post-norm", post))
    ]
    return Outcome(
        outputs=outputs,
        theory={"rms_vs_layernorm_centered": 0.0},
        series=series,
        notes=[
            "Gradient norms at initialisation only: they say which placement needs a learning-"
            "rate warm-up (Xiong et al. 2020), not which trains to the better model.",
            f"Averaged over {params.trials} initialisation(s); one draw varies by tens of percent.",
        ],
    )


def _mean(runs: list[list[float]]) -> list[float]:
    return [sum(values) / len(values) for values in zip(*runs, strict=True)]


# --- the demo ------------------------------------------------------------------------

NORM_DEPTH = Demo(spec=spec.NORM_DEPTH, compute=compute)

"""``lora``: LoRA on a real ``nn.Linear``, its exact merge, and LoRA / QLoRA sizes of real models.

LoRA (Hu et al. 2021, arXiv:2106.09685, §4.1) freezes a pretrained weight
W ∈ R^(d×k) and learns W + ΔW = W + BA with B ∈ R^(d×r), A ∈ R^(r×k): A starts
random, B at zero, so ΔW = 0 at the start, and ΔWx is scaled by α/r. The layer
here is built as peft's ``LoraLayer`` builds it: ``lora_A = nn.Linear(k, r)``
initialised like ``nn.Linear`` (Kaiming uniform, a = √5), ``lora_B =
nn.Linear(r, d)`` at zero, scaling α/r (α/√r with ``use_rslora``).

The demo, in float64:

1. wraps a real ``nn.Linear(k, d, bias=False)``, freezes it and counts the
   parameters that still require a gradient: r(d + k), against d·k;
2. compares the adapted layer with the base layer before training (B = 0:
   equal to the last bit, since Wx + 0 = Wx);
3. runs a few Adam steps on A and B towards a target of the form (W + a rank-r
   change)x, merges W + scaling · BA into a fresh ``nn.Linear``, and compares its
   output with the adapter path on new inputs (the same linear map, so only
   rounding differs: about 1e-15 relative);
4. builds a released Llama config on the ``meta`` device with ``llama_params``'s
   model and counts what LoRA adds to the chosen projections of every block, by
   adding meta ``nn.Linear`` pairs next to them;
5. sizes the QLoRA base (Dettmers et al. 2023, arXiv:2305.14314, §3): NF4 codes
   (4 bits, two per byte) for every block linear weight in blocks of 64, one
   8-bit constant per block, and per 256 blocks one fp32 constant (double
   quantization: 8/64 + 32/(64 · 256) ≈ 0.127 bits per weight, against 32/64 =
   0.5 with fp32 constants). The bits per weight come from the ``nbytes`` of meta
   tensors of those shapes, blocks padded per weight matrix.
"""

import math

import torch
from torch import nn

from app.demos.specs import finetuning_lora as spec
from app.demos.specs.finetuning_lora import MODELS, TARGET_MODULES, LoraParams
from app.demos.specs.training_llama import LlamaConfigParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos.training_llama import build_on_meta, count_params

NF4_BLOCK = 64  # weights per first-level constant (QLoRA §3)
DQ_BLOCK = 256  # first-level constants per second-level constant
LEARNING_RATE = 1e-2
BF16_BYTES = 2
ADAPTER_STATE_BYTES = 2 + 2 + 4 + 4  # bf16 weight and gradient, fp32 Adam m and v
FULL_FINETUNE_BYTES = 16  # mixed-precision Adam: 2 + 2 + 12 (ZeRO §3.1)

# --- the LoRA layer ------------------------------------------------------------------


class LoraLinear(nn.Module):
    """A frozen ``nn.Linear`` plus ``scaling · lora_B(lora_A(x))``, laid out as peft's."""

    def __init__(
        self,
        base: nn.Linear,
        rank: int,
        alpha: float,
        rslora: bool = False,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.base_layer = base.requires_grad_(False)
        factory = {"dtype": base.weight.dtype, "device": base.weight.device}
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, **factory)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, **factory)
        self.scaling = alpha / math.sqrt(rank) if rslora else alpha / rank
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5), generator=generator)
        nn.init.zeros_(self.lora_B.weight)

    def adapter(self, x: torch.Tensor) -> torch.Tensor:
        """scaling · BAx: what the adapter adds to the frozen output."""
        out: torch.Tensor = self.lora_B(self.lora_A(x)) * self.scaling
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.base_layer(x) + self.adapter(x)
        return out

    def merged(self) -> nn.Linear:
        """A plain ``nn.Linear`` with weight W + scaling · BA: no adapter left at inference."""
        base = self.base_layer
        out = nn.Linear(
            base.in_features,
            base.out_features,
            bias=False,
            dtype=base.weight.dtype,
            device=base.weight.device,
        )
        with torch.no_grad():  # W + scaling · BA, in place: no d × k temporaries
            out.weight.copy_(base.weight).addmm_(
                self.lora_B.weight, self.lora_A.weight, alpha=self.scaling
            )
        return out


def trainable(module: nn.Module) -> int:
    """Parameters that would receive a gradient.

    Example:
        >>> trainable(LoraLinear(nn.Linear(4096, 4096, bias=False), rank=8, alpha=16))
        65536
    """
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


# --- one real layer ------------------------------------------------------------------


def train_and_merge(params: LoraParams, device: torch.device) -> dict[str, float]:
    """Wrap, check the identity at init, train a few Adam steps, merge and compare."""
    gen = torch.Generator(device=device).manual_seed(params.seed)
    k, d, r = params.d_in, params.d_out, params.rank

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64, device=device)

    with torch.inference_mode(False), torch.enable_grad():
        base = nn.Linear(k, d, bias=False, dtype=torch.float64, device=device)
        # nn.Linear's own init, redrawn from the demo's generator (not the global one)
        nn.init.kaiming_uniform_(base.weight, a=math.sqrt(5), generator=gen)
        layer = LoraLinear(base, r, params.alpha, params.rslora, generator=gen)
        x = randn(params.tokens, k)
        # A target the adapter can reach: the base map plus a rank-r change UV of similar
        # size, applied as x Vᵀ Uᵀ so that no second d × k matrix is made.
        u, v = randn(d, r), randn(r, k) / math.sqrt(r * k)
        with torch.no_grad():
            target = base(x) + (x @ v.T) @ u.T
        with torch.no_grad():
            init_diff = (layer(x) - base(x)).abs().max().item()
            loss_start = (layer(x) - target).pow(2).mean().item()
        optimizer = torch.optim.Adam(
            [layer.lora_A.weight, layer.lora_B.weight], lr=LEARNING_RATE, foreach=False
        )
        for _ in range(params.steps):
            optimizer.zero_grad()
            loss = (layer(x) - target).pow(2).mean()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            loss_end = (layer(x) - target).pow(2).mean().item()
            fresh = randn(min(params.tokens, 64), k)
            merged = layer.merged()
            merge_diff = (merged(fresh) - layer(fresh)).abs().max().item()
            adapter_max = layer.adapter(fresh).abs().max().item()
            a, b = layer.lora_A.weight, layer.lora_B.weight
            # rank(BA) = rank((BᵀB)(AAᵀ)), an r × r matrix: no SVD of the d × k update
            delta_rank = torch.linalg.matrix_rank((b.T @ b) @ (a @ a.T)).item()
    return {
        "layer_params": float(base.weight.numel()),
        "trainable_params": float(trainable(layer)),
        "trainable_fraction": trainable(layer) / base.weight.numel(),
        "scaling": layer.scaling,
        "init_max_abs_diff": init_diff,
        "loss_start": loss_start,
        "loss_end": loss_end,
        "adapter_max_abs_output": adapter_max,
        "merge_max_abs_diff": merge_diff,
        "delta_rank": float(delta_rank),
    }


# --- a released model on meta --------------------------------------------------------


def model_config(name: str) -> LlamaConfigParams:
    """``llama_params``'s config fields for a released model."""
    return LlamaConfigParams(**MODELS[name])  # type: ignore[arg-type]


def block_linears(model: nn.Module) -> list[tuple[str, nn.Linear]]:
    """Every ``nn.Linear`` inside the blocks (the output head is not one of them)."""
    return [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(m, nn.Linear) and name.startswith("layers.")
    ]


def lora_on_meta(model: nn.Module, targets: tuple[str, ...], rank: int) -> int:
    """Parameters of LoRA pairs built on meta next to every targeted block projection."""
    with torch.device("meta"):
        pairs = nn.ModuleList(
            nn.ModuleList(
                [
                    nn.Linear(m.in_features, rank, bias=False),
                    nn.Linear(rank, m.out_features, bias=False),
                ]
            )
            for name, m in block_linears(model)
            if name.rsplit(".", 1)[-1] in targets
        )
    return count_params(pairs)


def nf4_bytes(numel: int, double_quant: bool = True) -> int:
    """Bytes of one weight matrix stored as QLoRA stores it, from meta tensor sizes.

    Codes: 4 bits, two per uint8. First level: one constant per 64 weights, fp32,
    or with double quantization 8 bits, plus one fp32 constant (and the fp32 mean
    subtracted before quantizing them) per 256 first-level constants.

    Example:
        >>> nf4_bytes(64 * 256, double_quant=False) * 8 / (64 * 256)
        4.5
    """
    blocks = -(-numel // NF4_BLOCK)

    def size(n: int, dtype: torch.dtype) -> int:
        return torch.empty(n, dtype=dtype, device="meta").nbytes

    codes = size(-(-numel // 2), torch.uint8)
    if not double_quant:
        return codes + size(blocks, torch.float32)
    # the mean of the first-level constants is one fp32 number per matrix
    return codes + size(blocks, torch.uint8) + size(-(-blocks // DQ_BLOCK), torch.float32) + 4


def model_sizes(params: LoraParams) -> dict[str, float]:
    """Count the model and its LoRA on meta; size full fine-tuning, LoRA state and QLoRA."""
    with torch.inference_mode(False):
        model = build_on_meta(model_config(params.model))
    total = count_params(model)
    lora = lora_on_meta(model, TARGET_MODULES[params.targets], params.rank)
    weights = [m.weight.numel() for _, m in block_linears(model)]
    quantized = sum(weights)
    dq_bytes = sum(nf4_bytes(n) for n in weights)
    single_bytes = sum(nf4_bytes(n, double_quant=False) for n in weights)
    rest_bytes = BF16_BYTES * (total - quantized)
    return {
        "model_params": float(total),
        "model_lora_params": float(lora),
        "model_lora_percent": 100 * lora / total,
        "adapter_file_mb": BF16_BYTES * lora / 1e6,
        "quantized_params": float(quantized),
        "nf4_bits_per_param": 8 * dq_bytes / quantized,
        "nf4_single_quant_bits_per_param": 8 * single_bytes / quantized,
        "bf16_base_gb": BF16_BYTES * total / 1e9,
        "qlora_base_gb": (dq_bytes + rest_bytes) / 1e9,
        "double_quant_saving_gb": (single_bytes - dq_bytes) / 1e9,
        "adapter_train_state_gb": ADAPTER_STATE_BYTES * lora / 1e9,
        "full_finetune_state_gb": FULL_FINETUNE_BYTES * total / 1e9,
    }


def lora_closed_form(name: str, targets: str, rank: int) -> int:
    """r(d + k) summed over the targeted projections of every block, from the config alone.

    Example:
        >>> lora_closed_form("llama2_7b", "q_v", 8)  # 32 layers × 2 × 8 × (4096 + 4096)
        4194304
    """
    c = MODELS[name]
    hidden, heads, kv = int(c["hidden"]), int(c["heads"]), int(c["kv_heads"])
    kv_width = hidden // heads * kv
    shapes = {
        "q_proj": (hidden, hidden),
        "k_proj": (hidden, kv_width),
        "v_proj": (hidden, kv_width),
        "o_proj": (hidden, hidden),
        "gate_proj": (hidden, int(c["intermediate"])),
        "up_proj": (hidden, int(c["intermediate"])),
        "down_proj": (int(c["intermediate"]), hidden),
    }
    per_layer = sum(rank * sum(shapes[t]) for t in TARGET_MODULES[targets])
    return int(c["layers"]) * per_layer


# --- compute -------------------------------------------------------------------------


def compute(params: LoraParams, device: torch.device) -> Outcome:
    """Train and merge one real layer; count and size the chosen model on meta."""
    layer = train_and_merge(params, device)
    sizes = model_sizes(params)
    k, d, r = params.d_in, params.d_out, params.rank
    dq_bits = 4 + 8 / NF4_BLOCK + 32 / (NF4_BLOCK * DQ_BLOCK)
    lora_theory = lora_closed_form(params.model, params.targets, r)
    theory = {
        "layer_params": float(d * k),
        "trainable_params": float(r * (d + k)),
        "trainable_fraction": r * (d + k) / (d * k),
        "scaling": params.alpha / (math.sqrt(r) if params.rslora else r),
        "init_max_abs_diff": 0.0,
        "merge_max_abs_diff": 0.0,
        "model_lora_params": float(lora_theory),
        "model_lora_percent": 100 * lora_theory / sizes["model_params"],
        "nf4_bits_per_param": dq_bits,
        "nf4_single_quant_bits_per_param": 4 + 32 / NF4_BLOCK,
    }
    return Outcome(
        outputs={**layer, **sizes},
        theory=theory,
        series=_series(params, sizes),
        notes=_notes(params),
    )


def _series(params: LoraParams, sizes: dict[str, float]) -> list[Series]:
    k, d = params.d_in, params.d_out
    ranks = [2**i for i in range(9) if 2**i <= min(k, d)]
    return [
        Series(
            name=f"LoRA on a {d} × {k} weight",
            kind="line",
            x=[float(r) for r in ranks],
            y=[float(r * (d + k)) for r in ranks],
            x_label="rank r",
            y_label="trainable parameters",
        ),
        Series(
            name=f"full fine-tuning of the {d} × {k} weight",
            kind="line",
            x=[float(r) for r in ranks],
            y=[float(d * k)] * len(ranks),
            x_label="rank r",
            y_label="trainable parameters",
        ),
        Series(
            name=f"{params.model}: memory before activations",
            kind="bar",
            x=[
                "full fine-tuning (16 B/param)",
                "LoRA, bf16 base",
                "QLoRA, NF4 + DQ base",
            ],
            y=[
                sizes["full_finetune_state_gb"],
                sizes["bf16_base_gb"] + sizes["adapter_train_state_gb"],
                sizes["qlora_base_gb"] + sizes["adapter_train_state_gb"],
            ],
            x_label="method",
            y_label="GB",
        ),
    ]


def _notes(params: LoraParams) -> list[str]:
    return [
        "The layer is float64 on the worker's device; LoRA A starts Kaiming-uniform and B at "
        "zero, as peft initialises them, and Adam (lr 0.01) updates A and B only.",
        f"{params.model}: counted on the meta device; LoRA pairs added to "
        f"{', '.join(TARGET_MODULES[params.targets])} of every block, never to the output head.",
        "QLoRA base: every block linear weight in NF4 (blocks of 64) with double quantization "
        "(8-bit constants, one fp32 constant per 256 blocks); embeddings, output head and norms "
        "counted in bf16. Activations, paging and fragmentation are not counted.",
    ]


# --- the demo ------------------------------------------------------------------------

LORA = Demo(spec=spec.LORA, compute=compute)

"""``activation_checkpointing``: what autograd keeps for backward, with and without checkpoints.

A stack of ``layers`` blocks of width ``d`` takes one real training step
(forward, ``sum().backward()``) on ``tokens`` rows in fp32, once as it is and
once with ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``
around each segment of ``blocks_per_segment`` blocks. Measured:

- the bytes autograd keeps for backward: a ``saved_tensors_hooks`` pack hook
  sees every tensor an operation saves; weights are left out and each storage
  counts once (``GELU`` saves the tensor the ``Linear`` before it returned);
- the peak memory of the tensors the step creates, from a dispatch mode that
  adds each new storage when an operation returns it and subtracts it when it
  is freed (weights, their gradients and the input exist before and are left
  out);
- the ``Linear`` forward calls, the matrix-multiply FLOPs (``FlopCounterMode``'s formulas)
  and the largest difference between the gradients of the two runs.

Theory (Chen et al. 2016, arXiv:1604.06174, §4.1, §4.3): without checkpoints
the stack keeps every block's saved tensors, layers × (2 activations for
Linear + GELU, 10 plus LayerNorm's two statistics per row for the pre-norm
MLP); with them it keeps only each segment's input, and the backward pass
rebuilds one segment at a time, so the peak falls by the difference less what
one segment saves besides its input (a checkpoint already). Recomputation
costs one more forward pass at most: the non-reentrant variant stops as soon
as it has rebuilt the last tensor the segment saves, so a segment that ends in
a Linear (the pre-norm MLP's down projection saves its input and weight, both
there before it runs) does not redo that matrix multiply.
"""

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import flop_registry

from app.demos.specs import training_checkpointing as spec
from app.demos.specs.training_checkpointing import BLOCK_WEIGHTS, CheckpointingParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------

FP32 = 4
LINEARS = {"linear_gelu": 1, "prenorm_mlp": 2}


# --- compute -------------------------------------------------------------------------


class PreNormMLP(nn.Module):
    """x + Linear(4d, d)(GELU(Linear(d, 4d)(LayerNorm(x)))): a transformer block's MLP half."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = x + self.down(self.act(self.up(self.norm(x))))
        return out


def build(params: CheckpointingParams, device: torch.device) -> nn.ModuleList:
    """The stack, with weights N(0, 1/fan_in) from a fixed seed, zero biases, unit norms."""
    generator = seeded(device, 0)  # the byte counts do not depend on the values
    with torch.device("meta"):
        blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(params.d, params.d), nn.GELU())
            if params.block == "linear_gelu"
            else PreNormMLP(params.d)
            for _ in range(params.layers)
        )
    blocks = blocks.to_empty(device=device)
    with torch.no_grad():
        for module in blocks.modules():
            if isinstance(module, nn.Linear):
                module.weight.normal_(0.0, module.in_features**-0.5, generator=generator)
                module.bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return blocks


class StepMonitor(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Bytes of the storages operations create while it is active, their peak, and FLOPs.

    A storage is added when an operation first returns a tensor on it and
    subtracted when it is freed (a weak reference's callback). Storages of
    ``existing`` tensors are never counted. FLOPs come from the formulas
    ``FlopCounterMode`` uses (``torch.utils.flop_counter.flop_registry``: matrix
    multiplies, convolutions, attention). ``FlopCounterMode`` itself is not
    used: its module tracking kept recomputed tensors alive and raised the peak.
    """

    def __init__(self, existing: Iterable[torch.Tensor]) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.live = 0
        self.peak = 0
        self.flops = 0
        self._seen: dict[int, weakref.ref[torch.UntypedStorage]] = {}
        for tensor in existing:
            storage = tensor.untyped_storage()
            self._seen[id(storage)] = weakref.ref(storage)

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        formula = flop_registry.get(func._overloadpacket)
        if formula is not None:
            self.flops += formula(*args, **kwargs, out_val=out)
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor):
                self._add(tensor.untyped_storage())
        return out

    def _add(self, storage: torch.UntypedStorage) -> None:
        seen = self._seen.get(id(storage))
        if seen is not None and seen() is storage:
            return
        size = storage.nbytes()
        self.live += size
        self.peak = max(self.peak, self.live)
        self._seen[id(storage)] = weakref.ref(storage, partial(self._free, size))

    def _free(self, size: int, _: object) -> None:
        self.live -= size


@dataclass(frozen=True)
class Step:
    """What one training step measured."""

    saved: int
    peak: int
    linear_calls: int
    flops: int


def run_segment(blocks: nn.ModuleList, h: torch.Tensor) -> torch.Tensor:
    for block in blocks:
        h = block(h)
    return h


def training_step(blocks: nn.ModuleList, x: torch.Tensor, segment: int | None) -> Step:
    """Forward and backward through ``blocks``; checkpoint every ``segment`` blocks if given.

    Gradients accumulate into existing ``.grad`` tensors (zeroed here), so the
    peak counts no weight-gradient buffers, only what the step itself creates.
    """
    parameters = list(blocks.parameters())
    weights = {p.untyped_storage().data_ptr() for p in parameters}
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    calls = [0]
    hooks = [
        module.register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
        for module in blocks.modules()
        if isinstance(module, nn.Linear)
    ]
    grads = [tensor.grad for tensor in (x, *parameters)]
    for grad in grads:
        assert grad is not None, "training_step accumulates into existing gradients"
        grad.zero_()
    existing = [x, *parameters, *(grad for grad in grads if grad is not None)]
    with StepMonitor(existing) as monitor:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            h = x
            for start in range(0, len(blocks), segment or len(blocks)):
                part = blocks[start : start + (segment or len(blocks))]
                if segment:
                    h = checkpoint(run_segment, part, h, use_reentrant=False)
                else:
                    h = run_segment(part, h)
        torch.autograd.backward(h.sum())
        del h
    for hook in hooks:
        hook.remove()
    return Step(sum(saved.values()), monitor.peak, calls[0], monitor.flops)


def closed_forms(params: CheckpointingParams) -> dict[str, float]:
    """What the outputs should be, in activations (tokens × d fp32) and FLOPs.

    Example:
        >>> forms = closed_forms(CheckpointingParams(blocks_per_segment=4))
        >>> forms["saved_without"], forms["saved_with"], forms["peak_saving"]
        (32.0, 4.0, 21.0)
    """
    layers, d, tokens = params.layers, params.d, params.tokens
    segments = layers // params.blocks_per_segment
    block = 2.0 if params.block == "linear_gelu" else 10 + 2 / d  # + LayerNorm's mean, rstd
    forward = 2.0 * tokens * d * d * BLOCK_WEIGHTS[params.block] * layers
    # Early stop: a segment ending in the MLP's down projection has rebuilt that Linear's
    # input, the last tensor it saves, before the multiply runs, so the multiply is skipped.
    skipped = segments * 2.0 * tokens * 4 * d * d if params.block == "prenorm_mlp" else 0.0
    return {
        "activation_bytes": float(tokens * d * FP32),
        "saved_without": layers * block,
        "saved_with": float(segments),
        "block_saved": block,
        "segment_saved": params.blocks_per_segment * block,
        # The rebuilt segment's first saved tensor is its input, already kept.
        "peak_saving": layers * block - segments - (params.blocks_per_segment * block - 1),
        "linear_calls_without": float(layers * LINEARS[params.block]),
        "linear_calls_with": float(
            2 * layers * LINEARS[params.block] - (segments if params.block == "prenorm_mlp" else 0)
        ),
        "flops_without": 3 * forward,
        "flops_with": 4 * forward - skipped,
        "recompute_share": (forward - skipped) / forward,
        "max_grad_difference": 0.0,
    }


def measure(params: CheckpointingParams, device: torch.device) -> tuple[Step, Step, Step, float]:
    """Steps without and with checkpoints, one segment alone, and the largest grad difference."""
    with torch.inference_mode(False):
        blocks = build(params, device)
        x = torch.randn(params.tokens, params.d, generator=seeded(device, 1), device=device)
        x.requires_grad_()  # as if a trained layer sat below: the first block's dx is computed
        tensors = [x, *blocks.parameters()]
        for tensor in tensors:
            tensor.grad = torch.zeros_like(tensor)
        without = training_step(blocks, x, None)
        reference = [tensor.grad.clone() for tensor in tensors if tensor.grad is not None]
        with_checkpoints = training_step(blocks, x, params.blocks_per_segment)
        difference = max(
            (tensor.grad - kept).abs().max().item()
            for tensor, kept in zip(tensors, reference, strict=True)
            if tensor.grad is not None
        )
        segment = training_step(blocks[: params.blocks_per_segment], x, None)
    return without, with_checkpoints, segment, difference


def compute(params: CheckpointingParams, device: torch.device) -> Outcome:
    """Measure a training step with and without checkpoints against the closed forms."""
    without, with_checkpoints, segment, difference = measure(params, device)
    unit = params.tokens * params.d * FP32
    outputs = {
        "activation_bytes": float(unit),
        "saved_bytes_without": float(without.saved),
        "saved_bytes_with": float(with_checkpoints.saved),
        "saved_without": without.saved / unit,
        "saved_with": with_checkpoints.saved / unit,
        "block_saved": segment.saved / unit / params.blocks_per_segment,
        "segment_saved": segment.saved / unit,
        "peak_without": without.peak / unit,
        "peak_with": with_checkpoints.peak / unit,
        "peak_saving": (without.peak - with_checkpoints.peak) / unit,
        "linear_calls_without": float(without.linear_calls),
        "linear_calls_with": float(with_checkpoints.linear_calls),
        "flops_without": float(without.flops),
        "flops_with": float(with_checkpoints.flops),
        "recompute_share": (with_checkpoints.flops - without.flops) / (without.flops / 3),
        "max_grad_difference": difference,
    }
    theory = closed_forms(params)
    theory["saved_bytes_without"] = theory["saved_without"] * unit
    theory["saved_bytes_with"] = theory["saved_with"] * unit
    labels = ["without checkpoints", f"checkpoint every {params.blocks_per_segment} block(s)"]
    unit_label = "activations (tokens × d, fp32)"
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=[
            Series(
                name="kept for backward after the forward pass",
                kind="bar",
                x=labels,
                y=[outputs["saved_without"], outputs["saved_with"]],
                x_label="run",
                y_label=unit_label,
            ),
            Series(
                name="peak during the step",
                kind="bar",
                x=labels,
                y=[outputs["peak_without"], outputs["peak_with"]],
                x_label="run",
                y_label=unit_label,
            ),
            Series(
                name="matrix-multiply FLOPs",
                kind="bar",
                x=labels,
                y=[outputs["flops_without"], outputs["flops_with"]],
                x_label="run",
                y_label="FLOPs",
            ),
        ],
        notes=NOTES,
    )


NOTES = [
    "Saved bytes: every tensor a saved_tensors_hooks pack hook sees, weights excluded, each "
    "storage once. With non-reentrant checkpoints the hook sees only the segments' inputs.",
    "Peak: the tensors the step creates (activations, activation gradients, temporaries such "
    "as a weight gradient before it is added to .grad), on top of weights and gradients.",
    "Non-reentrant checkpoints stop recomputing a segment once they have rebuilt the last "
    "tensor it saves: a segment ending in a Linear does not redo that multiply.",
    "Sources: Chen et al. 2016, arXiv:1604.06174 §4.1 and §4.3; torch/utils/checkpoint.py "
    "(use_reentrant=False, early stop).",
]


# --- the demo ------------------------------------------------------------------------

ACTIVATION_CHECKPOINTING = Demo(spec=spec.ACTIVATION_CHECKPOINTING, compute=compute)

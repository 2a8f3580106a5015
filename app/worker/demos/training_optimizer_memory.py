"""``optimizer_memory``: bytes per parameter to train a model, measured from real tensors.

A small MLP takes one real training step with a real ``torch.optim`` optimizer;
the bytes of its weights, gradients, fp32 master copy and everything the
optimizer keeps in ``optimizer.state`` are added up and divided by its
parameter count, then scaled to a model of ``billions`` parameters.

``torch.optim.Adam`` and ``AdamW`` keep ``exp_avg`` and ``exp_avg_sq``, each
``zeros_like(param)``, plus a scalar ``step`` tensor per parameter tensor; so
8 bytes per fp32 parameter. In mixed precision (bf16 or fp16 weights and
gradients, an fp32 master copy that the optimizer updates) that gives
2 + 2 + 4 + 8 = 16 bytes per parameter, the "2Ψ + 2Ψ + KΨ with K = 12" of the
ZeRO paper (Rajbhandari et al. 2020, §3.1). Activations are not counted.
"""

import copy
from collections.abc import Callable, Iterable

import torch
from torch import nn

from app.demos.specs import training_optimizer_memory as spec
from app.demos.specs.training_optimizer_memory import (
    OptimizerMemoryParams,
)
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------


# --- compute -------------------------------------------------------------------------

WORKING_DTYPE = {"mixed": torch.bfloat16, "fp32": torch.float32, "bf16": torch.bfloat16}

OPTIMIZERS: dict[str, Callable[[Iterable[nn.Parameter]], torch.optim.Optimizer]] = {
    "sgd": lambda p: torch.optim.SGD(p, lr=1e-3),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3),
    "adamw_amsgrad": lambda p: torch.optim.AdamW(p, lr=1e-3, amsgrad=True),
    "adafactor": lambda p: torch.optim.Adafactor(p, lr=1e-3),
}

STATE_COPIES = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adamw_amsgrad": 3}
"""Full-size state tensors per parameter (Adafactor's depend on the shapes instead)."""

GB, GIB = 1e9, 2**30


def small_model(width: int, device: torch.device, generator: torch.Generator) -> nn.Sequential:
    """The measured model, fp32, with weights drawn from ``generator`` (not the global RNG)."""
    with torch.device("meta"):
        model = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.LayerNorm(width)
        )
    model = model.to_empty(device=device)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.02, generator=generator)
    return model


def tensor_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes of storage the tensors' elements take.

    Example:
        >>> tensor_bytes([torch.zeros(10, dtype=torch.bfloat16), torch.zeros(3)])
        32
    """
    return sum(t.numel() * t.element_size() for t in tensors)


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of every tensor in ``optimizer.state`` (moments, step counters, ...)."""
    return tensor_bytes(
        value
        for state in optimizer.state.values()
        for value in state.values()
        if torch.is_tensor(value)
    )


def state_theory(params: OptimizerMemoryParams, model: nn.Module, state_bytes: int) -> float:
    """Bytes of optimizer state per parameter from the algorithm, step counters left out."""
    total = sum(p.numel() for p in model.parameters())
    if params.optimizer == "adafactor":
        # A matrix keeps a row and a column vector of second moments; a vector keeps a full one.
        elements = sum(sum(p.shape) if p.dim() == 2 else p.numel() for p in model.parameters())
        return elements * state_bytes / total
    return STATE_COPIES[params.optimizer] * state_bytes


NOTES = [
    "Measured on one real step of a small MLP; activations, temporary buffers and "
    "allocator overhead are not counted.",
    "The optimizer state includes one 4-byte step counter per parameter tensor (Adam, "
    "AdamW, Adafactor), which the theory leaves out.",
]
ADAFACTOR_NOTES = [
    "Adafactor's state depends on the matrix shapes: the per-parameter figure is this "
    "small model's, not a large model's."
]


def compute(params: OptimizerMemoryParams, device: torch.device) -> Outcome:
    """One real training step; count the bytes it keeps between steps."""
    generator = seeded(device, 0)  # the byte counts do not depend on the values
    working_dtype = WORKING_DTYPE[params.precision]
    with torch.inference_mode(False), torch.enable_grad():
        master = small_model(params.width, device, generator)
        working = master if params.precision == "fp32" else copy.deepcopy(master).to(working_dtype)
        inputs = torch.randn(
            16, params.width, generator=generator, device=device, dtype=working_dtype
        )
        working(inputs).float().square().mean().backward()
        if params.precision == "mixed":
            # The optimizer updates the fp32 master copy from the low-precision gradients.
            for kept, used in zip(master.parameters(), working.parameters(), strict=True):
                assert used.grad is not None
                kept.grad = used.grad.float()
            stepped = master
        else:
            stepped = working
        optimizer = OPTIMIZERS[params.optimizer](stepped.parameters())
        optimizer.step()
        if params.precision == "mixed":
            for kept in master.parameters():
                kept.grad = None  # a transient copy: mixed-precision training frees it
        count = sum(p.numel() for p in working.parameters())
        weights = tensor_bytes(working.parameters())
        grads = tensor_bytes(p.grad for p in working.parameters() if p.grad is not None)
        masters = tensor_bytes(master.parameters()) if params.precision == "mixed" else 0
        state = optimizer_state_bytes(optimizer)
        state_element = 2 if params.precision == "bf16" else 4
        theory_state = state_theory(params, stepped, state_element)

    working_element = 4 if params.precision == "fp32" else 2
    theory_master = 4 if params.precision == "mixed" else 0
    per_param = {
        "weight_bytes_per_param": weights / count,
        "grad_bytes_per_param": grads / count,
        "master_bytes_per_param": masters / count,
        "optimizer_bytes_per_param": state / count,
    }
    total = sum(per_param.values())
    theory_total = 2 * working_element + theory_master + theory_state
    size = params.billions * 1e9
    return Outcome(
        outputs={
            **per_param,
            "total_bytes_per_param": total,
            "total_gb": total * size / GB,
            "total_gib": total * size / GIB,
            "optimizer_gb": per_param["optimizer_bytes_per_param"] * size / GB,
            "small_model_params": float(count),
        },
        theory={
            "weight_bytes_per_param": float(working_element),
            "grad_bytes_per_param": float(working_element),
            "master_bytes_per_param": float(theory_master),
            "optimizer_bytes_per_param": theory_state,
            "total_bytes_per_param": theory_total,
            "total_gb": theory_total * size / GB,
            "total_gib": theory_total * size / GIB,
        },
        series=[
            Series(
                name=f"{params.optimizer}, {params.precision}",
                kind="bar",
                x=["weights", "gradients", "fp32 master", "optimizer state"],
                y=list(per_param.values()),
                x_label="kept between steps",
                y_label="bytes per parameter",
            )
        ],
        notes=NOTES + (ADAFACTOR_NOTES if params.optimizer == "adafactor" else []),
    )


# --- the demo ------------------------------------------------------------------------

OPTIMIZER_MEMORY = Demo(spec=spec.OPTIMIZER_MEMORY, compute=compute)

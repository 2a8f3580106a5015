"""``optimizer_memory``: bytes per parameter to train a model, measured from real tensors.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_optimizer_memory.py``. No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec

OptimizerName = Literal["sgd", "sgd_momentum", "adam", "adamw", "adamw_amsgrad", "adafactor"]


Precision = Literal["mixed", "fp32", "bf16"]


class OptimizerMemoryParams(DemoParams):
    optimizer: OptimizerName = Field(
        "adamw",
        title="Optimizer",
        description="A torch.optim optimizer: SGD, SGD with momentum 0.9, Adam, AdamW, AdamW "
        "with amsgrad, Adafactor.",
    )
    precision: Precision = Field(
        "mixed",
        title="Precision",
        description="mixed: bf16 weights and gradients, fp32 master copy and optimizer state; "
        "fp32: everything fp32; bf16: everything bf16, no master copy.",
    )
    billions: float = Field(
        7.0,
        ge=0.001,
        le=10_000.0,
        title="Model size (billions)",
        description="Parameters of the model to scale the per-parameter bytes to, in billions.",
    )
    width: int = Field(
        128,
        ge=8,
        le=512,
        title="Small model width",
        description="Width w of the measured MLP: Linear(w, 4w), GELU, Linear(4w, w), "
        "LayerNorm(w).",
    )


OPTIMIZER_MEMORY = DemoSpec(
    name="optimizer_memory",
    version=1,
    title="Training memory per parameter: weights, gradients, master copy, optimizer state",
    description="Takes one real torch.optim step on a small model, counts the bytes of "
    "weights, gradients, fp32 master copy and optimizer state, and scales them to a model size.",
    params=OptimizerMemoryParams,
    outputs={
        "weight_bytes_per_param": "Bytes of the weights the forward pass uses, per parameter.",
        "grad_bytes_per_param": "Bytes of their gradients, per parameter.",
        "master_bytes_per_param": "Bytes of the fp32 master copy (mixed precision only).",
        "optimizer_bytes_per_param": "Bytes of every tensor in optimizer.state, per parameter.",
        "total_bytes_per_param": "The four added up.",
        "total_gb": "total_bytes_per_param × billions × 10⁹, in GB (10⁹ bytes).",
        "total_gib": "The same in GiB (2³⁰ bytes).",
        "optimizer_gb": "The optimizer state alone for the scaled model, in GB.",
        "small_model_params": "Parameters of the measured MLP.",
    },
    worst_cases=({"optimizer": "adamw_amsgrad", "precision": "mixed", "width": 512},),
)

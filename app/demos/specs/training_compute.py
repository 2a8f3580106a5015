"""``training_compute``: training FLOPs as 6ND, and the days they take on N GPUs at an MFU.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/training_compute.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec


class TrainingComputeParams(DemoParams):
    params_billions: float = Field(
        7.0, ge=0.001, le=100_000.0, title="Parameters N (billions)", description="Model size."
    )
    tokens_billions: float = Field(
        2000.0,
        ge=0.001,
        le=1_000_000.0,
        title="Tokens D (billions)",
        description="Training tokens (2000 = 2T).",
    )
    gpus: int = Field(1024, ge=1, le=1_000_000, title="GPUs", description="Accelerators in use.")
    peak_tflops: float = Field(
        312.0,
        ge=1.0,
        le=100_000.0,
        title="Peak TFLOP/s per GPU",
        description="Dense peak for the training precision (A100 bf16: 312).",
    )
    mfu: float = Field(
        0.4,
        ge=0.01,
        le=1.0,
        title="MFU",
        description="Model FLOPs utilisation: the share of peak the 6ND FLOPs achieve.",
    )
    gpu_hours: float = Field(
        0.0,
        ge=0.0,
        le=1e10,
        title="Reported GPU-hours",
        description="GPU-hours a run reported; when above 0, implied_mfu says what MFU that is.",
    )


TRAINING_COMPUTE = DemoSpec(
    name="training_compute",
    version=1,
    title="Training compute 6ND and days on N GPUs",
    description="Total training FLOPs 6ND, the GPU-hours they take at a peak throughput and "
    "an MFU, and the wall-clock days on a number of GPUs.",
    params=TrainingComputeParams,
    outputs={
        "flops": "6 × N × D.",
        "flops_per_token": "6 × N.",
        "gpu_hours": "6ND / (peak × MFU), in GPU-hours.",
        "days": "gpu_hours / GPUs / 24: wall-clock days.",
        "tokens_per_gpu_second": "Training tokens each GPU processes per second at that MFU.",
        "cluster_tokens_per_second": "The same for all GPUs together.",
        "implied_mfu": "6ND / (reported GPU-hours × peak): the MFU a reported run achieved.",
    },
    uses_device=False,
    worst_cases=({"params_billions": 100_000.0, "tokens_billions": 1_000_000.0, "gpus": 1},),
)

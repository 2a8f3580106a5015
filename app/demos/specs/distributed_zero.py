"""``zero_memory``: model-state memory per GPU under ZeRO stages 0–3, and checkpoint sizes.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/distributed_zero.py``. The model fields are ``llama_params``'s
(Llama-2-7B by default). No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.spec import DemoSpec
from app.demos.specs.training_llama import LARGEST_CONFIG, LlamaConfigParams

Stage = Literal[0, 1, 2, 3]


class ZeroMemoryParams(LlamaConfigParams):
    gpus: int = Field(
        64,
        ge=1,
        le=65_536,
        title="GPUs N_d",
        description="Data-parallel degree: the ranks that share the model states.",
    )
    stage: Stage = Field(
        2,
        title="ZeRO stage",
        description="0: plain data parallelism; 1: optimizer states sharded; 2: and gradients; "
        "3: and the 16-bit parameters.",
    )
    optimizer_bytes: int = Field(
        12,
        ge=0,
        le=32,
        title="Optimizer bytes K",
        description="K, bytes of optimizer state per parameter: 12 for mixed-precision Adam "
        "(fp32 master copy, m and v, 4 bytes each).",
    )


ZERO_MEMORY = DemoSpec(
    name="zero_memory",
    version=1,
    title="ZeRO stages: model-state memory per GPU and checkpoint sizes",
    description="Counts a Llama-style model's parameters on the meta device, shards a flat "
    "buffer of them over N data-parallel ranks as each ZeRO stage does, and reports the "
    "weights, gradients and optimizer state one rank holds, against ZeRO's formulas.",
    params=ZeroMemoryParams,
    outputs={
        "params": "Ψ: parameters of the model, counted on the meta device.",
        "shard_params": "Parameters in one rank's shard: ceil(Ψ / N), the flat buffer padded "
        "to a multiple of N.",
        "weight_bytes": "16-bit weights on one GPU at the chosen stage.",
        "gradient_bytes": "16-bit gradients on one GPU at the chosen stage.",
        "optimizer_state_bytes": "K bytes of optimizer state per parameter, on one GPU at the "
        "chosen stage.",
        "total_bytes": "Model states on one GPU: weights + gradients + optimizer state.",
        "total_gb": "total_bytes in GB (10⁹ bytes).",
        "bytes_per_param": "total_bytes / Ψ.",
        "reduction_vs_dp": "Model states per GPU under plain data parallelism (stage 0) over "
        "those at the chosen stage.",
        "paper_dp_gb": "ZeRO's Figure 1 example (Ψ = 7.5B, N = 64, K = 12), stage 0, in GB.",
        "paper_stage1_gb": "The same example under stage 1 (P_os).",
        "paper_stage2_gb": "The same example under stage 2 (P_os+g).",
        "paper_stage3_gb": "The same example under stage 3 (P_os+g+p).",
        "checkpoint_weights_gb": "Weights-only checkpoint in bf16: 2Ψ bytes, in GB.",
        "checkpoint_full_gb": "Training checkpoint: bf16 weights + K bytes of optimizer state "
        "per parameter, (2 + K)Ψ bytes, in GB; gradients, RNG and data-loader state not counted.",
    },
    uses_device=False,
    worst_cases=({**LARGEST_CONFIG, "gpus": 65_536, "stage": 3, "optimizer_bytes": 32},),
)

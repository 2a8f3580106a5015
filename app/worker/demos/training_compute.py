"""``training_compute``: training FLOPs as 6ND, and the days they take on N GPUs at an MFU.

Kaplan et al. (2020, §2.1) count about 2N FLOPs per token for the forward pass
of a model with N parameters (one multiply and one add per weight) and twice
that for the backward pass, so C ≈ 6N per training token and 6ND for D tokens;
the attention term they add, 2 · n_layer · n_ctx · d_model per token forward, is
small while d_model is large next to n_ctx / 12. (``llama_params`` measures the
6 and the attention term with FlopCounterMode.)

Model FLOPs utilisation (MFU, PaLM, Appendix B) is the share of the hardware's
peak that those model FLOPs use: time = 6ND / (GPUs × peak × MFU). Plain
arithmetic, no torch.
"""

import torch

from app.demos.specs import training_compute as spec
from app.demos.specs.training_compute import TrainingComputeParams
from app.worker.demo import Demo, Outcome, Series

# --- parameters ----------------------------------------------------------------------


# --- compute -------------------------------------------------------------------------

HOUR, DAY = 3600.0, 86_400.0
GPU_COUNTS = [2**k for k in range(3, 17)]  # 8 to 65,536


def training_flops(params_billions: float, tokens_billions: float) -> float:
    """6 N D.

    Example:
        >>> f"{training_flops(6.738415616, 2000):.4e}"
        '8.0861e+22'
    """
    return 6.0 * params_billions * 1e9 * tokens_billions * 1e9


def compute(params: TrainingComputeParams, device: torch.device) -> Outcome:
    """6ND, then GPU-hours and wall-clock days at the given MFU."""
    del device  # arithmetic only
    flops = training_flops(params.params_billions, params.tokens_billions)
    achieved = params.peak_tflops * 1e12 * params.mfu  # FLOP/s per GPU
    gpu_seconds = flops / achieved
    tokens = params.tokens_billions * 1e9
    outputs = {
        "flops": flops,
        "flops_per_token": 6.0 * params.params_billions * 1e9,
        "gpu_hours": gpu_seconds / HOUR,
        "days": gpu_seconds / params.gpus / DAY,
        "tokens_per_gpu_second": tokens / gpu_seconds,
        "cluster_tokens_per_second": tokens / gpu_seconds * params.gpus,
    }
    if params.gpu_hours > 0:
        outputs["implied_mfu"] = flops / (params.gpu_hours * HOUR * params.peak_tflops * 1e12)
    return Outcome(
        outputs=outputs,
        series=[
            Series(
                name=f"MFU {params.mfu:g}, {params.peak_tflops:g} TFLOP/s peak",
                kind="line",
                x=GPU_COUNTS,
                y=[gpu_seconds / count / DAY for count in GPU_COUNTS],
                x_label="GPUs",
                y_label="days",
            )
        ],
        notes=[
            "6ND counts the parameter FLOPs only (Kaplan et al. 2020, §2.1); attention adds "
            "about 12 · layers · hidden · sequence length per token (see llama_params).",
            "Ideal scaling: days = GPU-hours / GPUs, as if MFU held at every cluster size.",
        ],
    )


# --- the demo ------------------------------------------------------------------------

TRAINING_COMPUTE = Demo(spec=spec.TRAINING_COMPUTE, compute=compute)

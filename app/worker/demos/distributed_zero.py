"""``zero_memory``: model-state memory per GPU under ZeRO stages 0–3, and checkpoint sizes.

The model is ``llama_params``'s Llama-style model, built on the ``meta`` device
(shapes, no storage) by the same function, and Ψ is ``sum(p.numel())`` over it.
ZeRO (Rajbhandari et al. 2019, §3.1) counts 2Ψ bytes of 16-bit weights, 2Ψ of
16-bit gradients and KΨ of optimizer state (K = 12 for mixed-precision Adam:
fp32 master copy, momentum and variance). Sharding over N data-parallel ranks
(§5.1–5.3) leaves one rank

    stage 0: (2 + 2 + K)Ψ      stage 1: (2 + 2)Ψ + KΨ/N
    stage 2: 2Ψ + (2 + K)Ψ/N   stage 3: (2 + 2 + K)Ψ/N

The measurement lays the parameters out as one flat meta buffer per state,
as DeepSpeed and FSDP do, pads it to a multiple of N and gives each rank an
equal chunk of ceil(Ψ / N) elements: the ``nbytes`` of meta tensors of that
shape and dtype is what a rank holds, within N − 1 elements of the formula.
"""

import torch

from app.demos.specs import distributed_zero as spec
from app.demos.specs.distributed_zero import ZeroMemoryParams
from app.demos.specs.training_llama import LlamaConfigParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos.training_llama import build_on_meta, count_params

HALF_BYTES = 2  # fp16 / bf16 weights and gradients
PAPER = {"psi": 7_500_000_000, "gpus": 64, "k": 12}  # ZeRO's Figure 1 example
STAGES = (0, 1, 2, 3)

# --- theory --------------------------------------------------------------------------


def formula_bytes(psi: float, gpus: int, stage: int, k: int) -> dict[str, float]:
    """Weights, gradients and optimizer state per GPU from ZeRO's §5 formulas.

    Example:
        >>> sum(formula_bytes(7.5e9, 64, 2, 12).values()) / 1e9
        16.640625
    """
    return {
        "weights": HALF_BYTES * psi / (gpus if stage >= 3 else 1),
        "gradients": HALF_BYTES * psi / (gpus if stage >= 2 else 1),
        "optimizer": k * psi / (gpus if stage >= 1 else 1),
    }


# --- measurement ---------------------------------------------------------------------


def shard_numel(psi: int, gpus: int) -> int:
    """Elements of one rank's shard: the flat buffer padded to a multiple of ``gpus``, split.

    The size of ``torch.chunk``'s first chunk and of FSDP's padded flat-parameter
    shard, written as a ceiling (chunking a meta tensor 65,536 ways costs 1 s).

    Example:
        >>> shard_numel(10, 4), torch.empty(10, device="meta").chunk(4)[0].numel()
        (3, 3)
    """
    return -(-psi // gpus)


def sharded_bytes(psi: int, gpus: int, stage: int, k: int) -> dict[str, float]:
    """Bytes of the meta tensors one rank holds: full buffers, or rank 0's shard."""
    shard = shard_numel(psi, gpus)

    def held(sharded: bool, dtype: torch.dtype, per_element: int = 1) -> float:
        n = shard if sharded else psi
        return float(torch.empty((n, per_element), dtype=dtype, device="meta").nbytes)

    return {
        "weights": held(stage >= 3, torch.bfloat16),
        "gradients": held(stage >= 2, torch.bfloat16),
        "optimizer": held(stage >= 1, torch.uint8, k),
    }


def meta_params(params: LlamaConfigParams) -> tuple[int, int]:
    """Ψ, and the bytes of the model's weights cast to bf16, both read off the meta model."""
    with torch.inference_mode(False):
        model = build_on_meta(params).to(torch.bfloat16)
        return count_params(model), sum(p.nbytes for p in model.parameters())


# --- compute -------------------------------------------------------------------------


def compute(params: ZeroMemoryParams, device: torch.device) -> Outcome:
    """Count Ψ on meta, shard it as the chosen stage does, and size the checkpoints."""
    del device  # shapes only: the meta device is the same everywhere
    psi, weight_nbytes = meta_params(params)
    n, k, stage = params.gpus, params.optimizer_bytes, params.stage
    held = sharded_bytes(psi, n, stage, k)
    theory = formula_bytes(psi, n, stage, k)
    total, total_theory = sum(held.values()), sum(theory.values())
    dp_total = sum(sharded_bytes(psi, n, 0, k).values())
    paper = {
        s: sum(sharded_bytes(PAPER["psi"], PAPER["gpus"], s, PAPER["k"]).values()) for s in STAGES
    }
    paper_theory = {
        s: sum(formula_bytes(PAPER["psi"], PAPER["gpus"], s, PAPER["k"]).values()) for s in STAGES
    }
    outputs = {
        "params": float(psi),
        "shard_params": float(shard_numel(psi, n)),
        "weight_bytes": held["weights"],
        "gradient_bytes": held["gradients"],
        "optimizer_state_bytes": held["optimizer"],
        "total_bytes": total,
        "total_gb": total / 1e9,
        "bytes_per_param": total / psi,
        "reduction_vs_dp": dp_total / total,
        **{name: paper[s] / 1e9 for s, name in enumerate(PAPER_OUTPUTS)},
        "checkpoint_weights_gb": weight_nbytes / 1e9,
        "checkpoint_full_gb": (weight_nbytes + k * psi) / 1e9,
    }
    theory_out = {
        "shard_params": psi / n,
        "weight_bytes": theory["weights"],
        "gradient_bytes": theory["gradients"],
        "optimizer_state_bytes": theory["optimizer"],
        "total_bytes": total_theory,
        "total_gb": total_theory / 1e9,
        "bytes_per_param": total_theory / psi,
        "reduction_vs_dp": (4 + k) * psi / total_theory,
        **{name: paper_theory[s] / 1e9 for s, name in enumerate(PAPER_OUTPUTS)},
        "checkpoint_weights_gb": HALF_BYTES * psi / 1e9,
        "checkpoint_full_gb": (HALF_BYTES + k) * psi / 1e9,
    }
    return Outcome(
        outputs=outputs, theory=theory_out, series=_series(psi, n, k), notes=_notes(params)
    )


PAPER_OUTPUTS = ("paper_dp_gb", "paper_stage1_gb", "paper_stage2_gb", "paper_stage3_gb")


def _series(psi: int, gpus: int, k: int) -> list[Series]:
    by_stage = [sharded_bytes(psi, gpus, s, k) for s in STAGES]
    counts = [2**i for i in range(17)]
    return [
        Series(
            name=f"model states per GPU by stage, N = {gpus}",
            kind="bar",
            x=["stage 0 (DP)", "stage 1", "stage 2", "stage 3"],
            y=[sum(b.values()) / 1e9 for b in by_stage],
            x_label="ZeRO stage",
            y_label="GB per GPU",
        ),
        *(
            Series(
                name=f"stage {s}",
                kind="line",
                x=[float(c) for c in counts],
                y=[sum(sharded_bytes(psi, c, s, k).values()) / 1e9 for c in counts],
                x_label="data-parallel GPUs N",
                y_label="GB per GPU",
            )
            for s in STAGES
        ),
    ]


def _notes(params: ZeroMemoryParams) -> list[str]:
    return [
        "Model states only: activations, temporary buffers and fragmentation (ZeRO's residual "
        "states, §3.2) come on top, and stage 3 also holds the gathered unit being computed.",
        f"Each rank's shard is ceil(Ψ / {params.gpus}) elements: the flat buffer padded to a "
        "multiple of N, as FSDP pads its flat parameter.",
        "The full checkpoint counts bf16 weights and the K bytes of optimizer state per "
        "parameter (fp32 master, m, v when K = 12); gradients, RNG and data-loader state are "
        "not counted.",
    ]


# --- the demo ------------------------------------------------------------------------

ZERO_MEMORY = Demo(spec=spec.ZERO_MEMORY, compute=compute)

"""``inference_roofline``: arithmetic intensity of prefill and decode against a GPU's ridge point.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/inference_roofline.py``. The model fields are
``llama_params``'s, with Llama 3 8B's values by default. No torch here.
"""

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from app.demos.spec import DemoSpec
from app.demos.specs.training_llama import LARGEST_CONFIG, LlamaConfigParams


@dataclass(frozen=True)
class Device:
    """Dense 16-bit tensor-core peak (no sparsity) and memory bandwidth of one GPU."""

    name: str
    peak_flops: float  # FLOP/s, dense bf16/fp16 on tensor cores
    bandwidth: float  # bytes/s of device memory
    source: str


DEVICES: dict[str, Device] = {
    "h100_sxm": Device(
        "NVIDIA H100 SXM",
        1979e12 / 2,
        3.35e12,
        "modal.com GPU Glossary, 'arithmetic bandwidth' table (H100 SXM BF16 tensor cores 989 "
        "TFLOP/s, HBM3 3.35 TB/s, ridge 295); glennklockwood.com/garden/processors/h100, from "
        "NVIDIA's H100 whitepaper (BF16 matrix 989.4 dense, 1978.9 sparse); NVIDIA's H100 table as "
        "reproduced by HPC Tech (BF16 Tensor Core 1,979 TFLOPS 'shown with sparsity, "
        "specifications 1/2 lower without sparsity'; 3,350 GB/s)",
    ),
    "a100_sxm_80gb": Device(
        "NVIDIA A100 80GB SXM",
        312e12,
        2.039e12,
        "modal.com GPU Glossary, 'arithmetic bandwidth' table (A100 80GB SXM BF16 tensor cores "
        "312 TFLOP/s, HBM2e 2 TB/s); glennklockwood.com/garden/processors/A100, from NVIDIA's A100 "
        "datasheet (BF16 312 dense, 624 sparse; 80 GB HBM2e at 2.039 TB/s); acecloud.ai B200/H200/"
        "H100/A100 comparison (A100 SXM4 80GB 2.039 TB/s)",
    ),
    "h200_sxm": Device(
        "NVIDIA H200 SXM",
        1979e12 / 2,
        4.8e12,
        "ttsugriy.github.io distributed-training-book, 'Hardware assumptions' table (H200 141 GB "
        "SXM: ~4.8 TB/s, dense BF16 ~989 TFLOP/s, 'TFLOP/s values are non-sparse'); itkb.uw.cz "
        "'NVIDIA H200 vs B300' (H200 SXM dense FP16/BF16 ~989 TFLOPS, 4.8 TB/s): the H100's 1,979 "
        "sparse figure halved, as for the H100",
    ),
}
"""The device table: dense 16-bit tensor-core peaks and memory bandwidths. NVIDIA's own
datasheets were not in the stored corpus searched (the pages, docs and code corpora), so each
entry names the secondary pages that were opened, at least two that agree. The L4 was dropped:
only its with-sparsity FP16 figure (242 TFLOPS) was found, on an AI-written page, and no
reputable page states its dense figure. Apple M-series chips are left out: Apple publishes their
memory bandwidth but no GPU FLOP/s figure."""

DeviceName = Literal["h100_sxm", "a100_sxm_80gb", "h200_sxm"]


class InferenceRooflineParams(LlamaConfigParams):
    """A Llama-style config (Llama 3 8B by default), a workload and a GPU."""

    vocab: int = Field(
        128_256,
        ge=2,
        le=262_144,
        title="Vocabulary",
        description="vocab_size: rows of the embedding.",
    )
    intermediate: int = Field(
        14_336,
        ge=1,
        le=65_536,
        title="Intermediate size",
        description="intermediate_size: width of the SwiGLU MLP.",
    )
    kv_heads: int = Field(
        8,
        ge=1,
        le=256,
        title="KV heads",
        description="num_key_value_heads; must divide the query heads (fewer = GQA).",
    )
    context: int = Field(
        2048,
        ge=1,
        le=131_072,
        title="Context tokens",
        description="Prefill: tokens of one prompt processed in one pass. Decode: tokens already "
        "in each sequence's KV cache.",
    )
    batch: int = Field(
        1,
        ge=1,
        le=4096,
        title="Decode batch",
        description="Sequences that each generate one token in one decode step.",
    )
    bytes_per_value: float = Field(
        2.0,
        ge=0.5,
        le=4.0,
        title="Bytes per value",
        description="Bytes of every weight, activation and cached K/V value: 2 for bf16, 1 for "
        "fp8, 0.5 for int4.",
    )
    device: DeviceName = Field(
        "h100_sxm",
        title="GPU",
        description="Dense bf16 tensor peak and memory bandwidth from the device table.",
    )
    price_per_hour: float = Field(
        2.0,
        ge=0.01,
        le=1000.0,
        title="Price per GPU-hour",
        description="A hypothetical price in dollars per GPU-hour (an assumption, not a quote), "
        "for the cost per million tokens.",
    )


INFERENCE_ROOFLINE = DemoSpec(
    name="inference_roofline",
    version=1,
    title="Roofline of LLM inference: prefill versus decode",
    description="Counts the FLOPs of a Llama-style model's matmuls with FlopCounterMode on the "
    "meta device and the bytes they move, for one prefill pass and one decode step, and places "
    "both against a GPU's ridge point (peak FLOP/s ÷ memory bandwidth).",
    params=InferenceRooflineParams,
    outputs={
        "prefill_flops": "FLOPs of one prefill pass over `context` tokens (every layer, and the "
        "output head on the last token).",
        "prefill_bytes": "Bytes the prefill pass reads and writes: weights, matmul inputs and "
        "outputs, and q, K, V and the output of a fused attention kernel.",
        "prefill_intensity": "prefill_flops / prefill_bytes, FLOP per byte.",
        "decode_flops": "FLOPs of one decode step: `batch` sequences, one new token each, "
        "attending to `context` cached tokens.",
        "decode_bytes": "Bytes the decode step reads and writes, KV cache included.",
        "decode_intensity": "decode_flops / decode_bytes, FLOP per byte.",
        "ridge_point": "Peak FLOP/s ÷ memory bandwidth of the chosen GPU, FLOP per byte.",
        "peak_tflops": "Dense bf16 tensor peak of the chosen GPU, in TFLOP/s.",
        "bandwidth_tb_s": "Memory bandwidth of the chosen GPU, in TB/s.",
        "prefill_compute_bound": "1 when prefill_intensity exceeds the ridge point, else 0.",
        "decode_compute_bound": "1 when decode_intensity exceeds the ridge point, else 0.",
        "prefill_attainable_tflops": "min(peak, prefill_intensity × bandwidth), in TFLOP/s.",
        "decode_attainable_tflops": "min(peak, decode_intensity × bandwidth), in TFLOP/s.",
        "params": "Parameters of the model.",
        "weight_bytes": "Bytes of the matmul weights (every projection and the output head) at "
        "bytes_per_value: what one forward pass must read.",
        "kv_bytes_per_token": "K and V bytes per cached token: 2 × layers × kv_heads × head_dim × "
        "bytes_per_value.",
        "decode_ceiling_tokens_per_s": "Batch-1 ceiling: bandwidth ÷ (weight bytes + KV cache "
        "of `context` tokens), tokens per second.",
        "decode_tokens_per_s": "Tokens per second of `batch` sequences by the roofline: batch ÷ "
        "max(decode FLOPs ÷ peak, decode bytes ÷ bandwidth).",
        "prefill_ms": "Roofline time of the prefill pass, max(FLOPs ÷ peak, bytes ÷ bandwidth), in "
        "milliseconds: a lower bound on the time to first token.",
        "decode_ms_per_step": "Roofline time of one decode step, in milliseconds.",
        "cost_per_million_tokens": "price_per_hour ÷ (decode_tokens_per_s × 3600) × 10⁶, dollars "
        "per million generated tokens at the roofline rate.",
        "ridge_batch": "Smallest decode batch whose intensity reaches the ridge point (0 when no "
        "batch up to 4096 does).",
    },
    uses_device=False,
    worst_cases=({**LARGEST_CONFIG, "context": 131_072, "batch": 4096, "bytes_per_value": 0.5},),
)

"""``batching``: static vs continuous batching, and contiguous vs paged KV-cache allocation.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/inference_batching.py``. No torch here.
"""

from typing import Literal

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

OutputLengths = Literal["exponential", "uniform", "constant"]


class BatchingParams(DemoParams):
    requests: int = Field(
        2000,
        ge=1,
        le=5000,
        title="Requests",
        description="Requests in the workload, served first come, first served.",
    )
    slots: int = Field(
        8,
        ge=1,
        le=512,
        title="Batch slots",
        description="Most requests one decode step runs (the maximum batch size).",
    )
    output_lengths: OutputLengths = Field(
        "exponential",
        title="Output lengths",
        description="Distribution of the tokens each request generates: exponential "
        "(floor + 1), uniform on 1 … 2·mean − 1, or constant.",
    )
    output_mean: int = Field(
        300,
        ge=1,
        le=4096,
        title="Mean output",
        description="Mean output length in tokens, before capping at max_len − prompt.",
    )
    prompt_mu: float = Field(
        4.6,
        ge=0.0,
        le=8.0,
        title="Prompt log-mean μ",
        description="Prompts are lognormal: floor(exp(N(μ, σ²))), clipped to 4 … max_len / 2.",
    )
    prompt_sigma: float = Field(
        0.9,
        ge=0.0,
        le=3.0,
        title="Prompt log-sd σ",
        description="Spread of the lognormal prompt lengths (0: every prompt floor(e^μ)).",
    )
    max_len: int = Field(
        2048,
        ge=16,
        le=8192,
        title="Max sequence length",
        description="Prompt + output cap: what a contiguous allocator reserves per request.",
    )
    load: float = Field(
        0.0,
        ge=0.0,
        le=0.99,
        title="Load",
        description="0: every request queued at step 0; otherwise Poisson arrivals asking for "
        "this fraction of the slots (mean gap = mean output / (load × slots)).",
    )
    block_size: int = Field(
        16,
        ge=1,
        le=256,
        title="Block size b",
        description="Tokens per KV block for the paged allocator (vLLM's default: 16).",
    )
    kv_budget_tokens: int = Field(
        15_728,
        ge=16,
        le=10_000_000,
        title="KV budget (token slots)",
        description="Token slots of KV cache memory (OPT-13B with 12 GiB: 15,728).",
    )
    seed: Seed = 0


BATCHING = DemoSpec(
    name="batching",
    version=1,
    title="Static vs continuous batching; contiguous vs paged KV cache",
    description="Draws a seeded workload of prompt and output lengths, schedules it step by "
    "step with request-level (static) and iteration-level (continuous, Orca) batching, and "
    "counts the KV-cache slots each request holds at every decode step under max-length, "
    "exact-length and paged (PagedAttention) allocation.",
    params=BatchingParams,
    outputs={
        "mean_prompt": "Mean prompt length of the workload, tokens.",
        "mean_output": "Mean output length of the workload, tokens (after capping).",
        "static_steps": "Decode steps the static scheduler runs (idle gaps not counted).",
        "continuous_steps": "Decode steps the continuous scheduler runs (idle gaps not counted).",
        "static_tokens_per_step": "Throughput under static batching: output tokens / decode steps.",
        "continuous_tokens_per_step": "Throughput under continuous batching: output tokens / "
        "decode steps.",
        "static_utilisation": "Share of slot-steps that produce a needed token, static batching.",
        "continuous_utilisation": "The same under continuous batching.",
        "static_mean_latency": "Mean steps from arrival to completion, static batching.",
        "continuous_mean_latency": "Mean steps from arrival to completion, continuous batching.",
        "throughput_gain": "continuous_tokens_per_step / static_tokens_per_step.",
        "latency_ratio": "static_mean_latency / continuous_mean_latency.",
        "max_used": "Max-length contiguous allocation: share of held KV slots that hold a token, "
        "over every decode step of every request.",
        "max_reserved": "The share of held slots reserved for tokens the request has not "
        "generated yet (max-length allocation).",
        "max_internal": "The share of held slots past the request's final length, never used "
        "(max-length allocation).",
        "exact_used": "Exact-length (oracle) contiguous allocation: share of held slots that "
        "hold a token; the rest is reserved.",
        "paged_used": "Paged allocation: share of held slots that hold a token; the rest is "
        "the unfilled part of the last block.",
        "paged_waste_mean": "Empty slots in a request's last block when it finishes, mean over "
        "requests.",
        "paged_waste_max": "The same, largest over requests (at most b − 1).",
        "max_requests": "Requests that fit in the KV budget under max-length allocation: "
        "floor(budget / mean slots held).",
        "exact_requests": "The same under exact-length allocation.",
        "paged_requests": "The same under paged allocation.",
    },
    uses_device=False,
    worst_cases=(
        {"requests": 5000, "slots": 1, "output_mean": 4096, "max_len": 8192, "load": 0.99},
        {"requests": 5000, "slots": 512, "output_mean": 4096, "max_len": 8192, "load": 0.99},
        {
            "requests": 5000,
            "slots": 64,
            "output_lengths": "uniform",
            "output_mean": 4096,
            "max_len": 8192,
            "block_size": 1,
            "load": 0.5,
        },
    ),
)

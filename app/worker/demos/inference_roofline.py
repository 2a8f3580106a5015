"""``inference_roofline``: arithmetic intensity of prefill and decode against a GPU's ridge point.

The model is a Llama-style block (RMSNorm → q, k, v, o projections with
grouped-query attention → RMSNorm → SwiGLU gate, up and down projections) run
on the ``meta`` device, so a 70B configuration costs what a small one does.
``FlopCounterMode`` counts the FLOPs of the real matmuls (2·m·n·k each); a
dispatch mode beside it adds up the bytes each matmul reads (its input and its
weight) and writes (its output). Attention is counted as one fused kernel, the
way FlashAttention runs it: it reads q, K and V once and writes its output, and
the scores never reach memory; its FLOPs are FlopCounterMode's count of the
two batched matmuls (q·Kᵀ and p·V), all T × T of them in a causal prefill.
Elementwise work (norms, SiLU, residual adds, softmax) is not counted.

Every block has the same shapes, so one block is counted and multiplied by the
layers; the output head runs on the last position of each sequence, as serving
engines compute logits only for the token they sample.

Prefill: one sequence of ``context`` tokens, causal attention. Decode: ``batch``
sequences, one new token each, attending to ``context`` cached tokens plus
itself; the step reads the cached K and V and writes the new ones.

The roofline (Williams, Waterman & Patterson 2009): attainable FLOP/s =
min(peak, intensity × bandwidth), so a pass whose intensity is below the ridge
point peak / bandwidth is limited by memory traffic, not arithmetic.
"""

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from app.demos.specs import inference_roofline as spec
from app.demos.specs.inference_roofline import DEVICES, InferenceRooflineParams
from app.worker.demo import Demo, Outcome, Series

MAX_BATCH = 4096
LINEAR_OPS = {torch.ops.aten.mm, torch.ops.aten.addmm}


@dataclass
class Traffic:
    """Elements read and written by the counted kernels (converted to bytes by the caller)."""

    elements: int = 0

    def add(self, *tensors: torch.Tensor) -> None:
        self.elements += sum(t.numel() for t in tensors)


class LinearTraffic(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Adds each ``mm``/``addmm``'s input, weight and output elements to a :class:`Traffic`."""

    def __init__(self, traffic: Traffic) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.traffic = traffic

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket in LINEAR_OPS:
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            self.traffic.add(*tensors, out)
        return out


@dataclass(frozen=True)
class Count:
    """FLOPs and elements moved by one forward pass (a block, or the head)."""

    flops: int
    elements: int


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, traffic: Traffic
) -> torch.Tensor:
    """Grouped-query attention as two batched matmuls; traffic counted as a fused kernel.

    q: (batch, heads, new, d); k, v: (batch, kv_heads, keys, d). Each KV head serves
    heads / kv_heads query heads, grouped so that K and V are read once per KV head.
    """
    batch, heads, new, d = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    group = heads // kv_heads
    qg = q.reshape(batch * kv_heads, group * new, d)
    scores = torch.bmm(qg, k.reshape(batch * kv_heads, keys, d).transpose(1, 2))
    if causal:  # a mask changes no shape: FlopCounterMode counts all keys × keys products
        scores = scores + 0
    weights = torch.softmax(scores * d**-0.5, dim=-1)
    out = torch.bmm(weights, v.reshape(batch * kv_heads, keys, d))
    traffic.add(q, k, v, out)
    return out.reshape(batch, heads, new, d)


def count_block(params: InferenceRooflineParams, batch: int, new: int, cached: int) -> Count:
    """FLOPs and elements of one block: ``batch`` sequences of ``new`` tokens after ``cached``."""
    d, heads, kv = params.hidden, params.heads, params.kv_heads
    hd = d // heads
    traffic = Traffic()
    with torch.device("meta"):
        x = torch.empty(batch, new, d)
        wq, wk, wv = torch.empty(heads * hd, d), torch.empty(kv * hd, d), torch.empty(kv * hd, d)
        wo = torch.empty(d, heads * hd)
        gate, up = torch.empty(params.intermediate, d), torch.empty(params.intermediate, d)
        down = torch.empty(d, params.intermediate)
        k_cache = torch.empty(batch, kv, cached, hd)
        v_cache = torch.empty(batch, kv, cached, hd)
        with FlopCounterMode(display=False) as flops, LinearTraffic(traffic):
            lin = torch.nn.functional.linear
            q = lin(x, wq).view(batch, new, heads, hd).transpose(1, 2)
            k_new = lin(x, wk).view(batch, new, kv, hd).transpose(1, 2)
            v_new = lin(x, wv).view(batch, new, kv, hd).transpose(1, 2)
            k_all = torch.cat([k_cache, k_new], dim=2)  # the cache write is the k, v outputs
            v_all = torch.cat([v_cache, v_new], dim=2)
            attn = _attention(q, k_all, v_all, causal=cached == 0 and new > 1, traffic=traffic)
            h = x + lin(attn.transpose(1, 2).reshape(batch, new, heads * hd), wo)
            lin(torch.nn.functional.silu(lin(h, gate)) * lin(h, up), down)
    return Count(int(flops.get_total_flops()), traffic.elements)


def count_head(params: InferenceRooflineParams, rows: int) -> Count:
    """The output head (hidden → vocab) on ``rows`` positions."""
    traffic = Traffic()
    with torch.device("meta"):
        x, w = torch.empty(rows, params.hidden), torch.empty(params.vocab, params.hidden)
        with FlopCounterMode(display=False) as flops, LinearTraffic(traffic):
            torch.nn.functional.linear(x, w)
    return Count(int(flops.get_total_flops()), traffic.elements)


def forward_count(
    params: InferenceRooflineParams, batch: int, new: int, cached: int
) -> tuple[int, float]:
    """FLOPs and bytes of one forward pass of the whole model, logits for the last positions."""
    block, head = count_block(params, batch, new, cached), count_head(params, batch)
    flops = params.layers * block.flops + head.flops
    elements = params.layers * block.elements + head.elements
    return flops, elements * params.bytes_per_value


def decode_intensity(params: InferenceRooflineParams, batch: int) -> float:
    flops, moved = forward_count(params, batch, 1, params.context)
    return flops / moved


def ridge_batch(params: InferenceRooflineParams, ridge: float) -> int:
    """Smallest decode batch up to 4096 whose intensity reaches ``ridge`` (0 if none).

    Intensity grows with the batch (the weights are read once whatever the batch),
    so a bisection finds it.
    """
    if decode_intensity(params, MAX_BATCH) < ridge:
        return 0
    lo, hi = 1, MAX_BATCH
    while lo < hi:
        mid = (lo + hi) // 2
        if decode_intensity(params, mid) >= ridge:
            hi = mid
        else:
            lo = mid + 1
    return lo


def model_sizes(params: InferenceRooflineParams) -> dict[str, float]:
    """Parameters, matmul weights and K/V elements per token, written out from the config.

    Example:
        >>> sizes = model_sizes(InferenceRooflineParams())
        >>> int(sizes["params"]), int(sizes["matmul_weights"]), int(sizes["kv_per_token"])
        (8030261248, 7504658432, 65536)
    """
    d, hd = params.hidden, params.hidden // params.heads
    attention = 2 * d * params.heads * hd + 2 * d * params.kv_heads * hd
    mlp = 3 * d * params.intermediate
    embedding = params.vocab * d
    head = 0 if params.tie_embeddings else embedding
    params_total = embedding + params.layers * (attention + mlp + 2 * d) + d + head
    return {
        "params": float(params_total),
        "matmul_weights": float(params.layers * (attention + mlp) + embedding),
        "kv_per_token": float(2 * params.layers * params.kv_heads * hd),
    }


# --- compute -------------------------------------------------------------------------


def compute(params: InferenceRooflineParams, device: torch.device) -> Outcome:
    """Count one prefill pass and one decode step, and place both on the device's roofline."""
    del device  # shapes only: the meta device is the same everywhere
    gpu = DEVICES[params.device]
    ridge = gpu.peak_flops / gpu.bandwidth
    with torch.inference_mode(False):
        prefill_flops, prefill_bytes = forward_count(params, 1, params.context, 0)
        decode_flops, decode_bytes = forward_count(params, params.batch, 1, params.context)
        batches = [2**i for i in range(13)]
        series_intensity = [decode_intensity(params, b) for b in batches]
        first_batch = ridge_batch(params, ridge)
    sizes = model_sizes(params)
    bpv = params.bytes_per_value
    weight_bytes = sizes["matmul_weights"] * bpv
    kv_per_token = sizes["kv_per_token"] * bpv
    prefill_i, decode_i = prefill_flops / prefill_bytes, decode_flops / decode_bytes
    step_s = max(decode_flops / gpu.peak_flops, decode_bytes / gpu.bandwidth)
    tokens_per_s = params.batch / step_s
    ceiling = gpu.bandwidth / (weight_bytes + kv_per_token * params.context)
    outputs = {
        "prefill_flops": float(prefill_flops),
        "prefill_bytes": prefill_bytes,
        "prefill_intensity": prefill_i,
        "decode_flops": float(decode_flops),
        "decode_bytes": decode_bytes,
        "decode_intensity": decode_i,
        "ridge_point": ridge,
        "peak_tflops": gpu.peak_flops / 1e12,
        "bandwidth_tb_s": gpu.bandwidth / 1e12,
        "prefill_compute_bound": float(prefill_i > ridge),
        "decode_compute_bound": float(decode_i > ridge),
        "prefill_attainable_tflops": min(gpu.peak_flops, prefill_i * gpu.bandwidth) / 1e12,
        "decode_attainable_tflops": min(gpu.peak_flops, decode_i * gpu.bandwidth) / 1e12,
        "params": sizes["params"],
        "weight_bytes": weight_bytes,
        "kv_bytes_per_token": kv_per_token,
        "decode_ceiling_tokens_per_s": ceiling,
        "decode_tokens_per_s": tokens_per_s,
        "prefill_ms": max(prefill_flops / gpu.peak_flops, prefill_bytes / gpu.bandwidth) * 1e3,
        "decode_ms_per_step": step_s * 1e3,
        "cost_per_million_tokens": params.price_per_hour / (tokens_per_s * 3600) * 1e6,
        "ridge_batch": float(first_batch),
    }
    head = params.vocab * params.hidden
    attention = 4.0 * params.layers * params.hidden  # q·Kᵀ and p·V, per query-key pair
    theory = {
        # 2 FLOPs per weight per token; the head runs on one position per sequence
        "prefill_flops": 2.0 * params.context * (sizes["matmul_weights"] - head)
        + 2.0 * head
        + attention * params.context**2,
        "decode_flops": 2.0 * params.batch * sizes["matmul_weights"]
        + attention * params.batch * (params.context + 1),
    }
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_series(params, batches, series_intensity, ridge),
        notes=_notes(params),
    )


def _series(
    params: InferenceRooflineParams, batches: list[int], intensity: list[float], ridge: float
) -> list[Series]:
    gpu = DEVICES[params.device]
    return [
        Series(
            name=f"decode, context {params.context}",
            kind="line",
            x=[float(b) for b in batches],
            y=intensity,
            x_label="decode batch",
            y_label="FLOP per byte",
        ),
        Series(
            name=f"ridge point, {gpu.name}",
            kind="line",
            x=[float(b) for b in batches],
            y=[ridge] * len(batches),
            x_label="decode batch",
            y_label="FLOP per byte",
        ),
    ]


def _notes(params: InferenceRooflineParams) -> list[str]:
    gpu = DEVICES[params.device]
    return [
        f"{gpu.name}: {gpu.peak_flops / 1e12:g} TFLOP/s dense bf16, "
        f"{gpu.bandwidth / 1e12:g} TB/s. Source: {gpu.source}.",
        "Bytes count each matmul's input, weight and output once, and attention as one fused "
        "kernel (q, K, V in, output out); elementwise operations and caches are ignored, so "
        "real kernels move somewhat more.",
        "Peak figures are vendor maxima; measured matmuls reach less, so the roofline is a "
        "ceiling, not a prediction.",
        f"The price of {params.price_per_hour:g} $/GPU-hour is an assumption for the arithmetic, "
        "not a market quote.",
    ]


# --- the demo ------------------------------------------------------------------------

INFERENCE_ROOFLINE = Demo(spec=spec.INFERENCE_ROOFLINE, compute=compute)

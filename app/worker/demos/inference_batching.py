"""``batching``: static vs continuous batching, and contiguous vs paged KV-cache allocation.

The workload: ``requests`` prompt lengths, floor(exp(N(μ, σ²))) clipped to
4 … max_len / 2, then output lengths (exponential: floor + 1; uniform; constant)
clipped to 1 … max_len − prompt, then, when ``load`` > 0, Poisson arrival times.
They are drawn with numpy's ``default_rng(seed)`` in that order, the same calls
as the cards' ``python run`` blocks, so a card's code and the demo draw the
same requests.

Scheduling (Yu et al., Orca, OSDI 2022, §3). One decode step emits one token
for every request it runs; prefill is folded into the first step and every
step costs the same. *Static* (request-level) batching takes up to ``slots``
waiting requests and runs them until the longest finishes; nobody returns
before the batch does. *Continuous* (iteration-level) batching refills free
slots from the queue, first come first served, before every step, and returns
a request as soon as its last token is out. The continuous scheduler here is
event-driven: it jumps from one admission or completion to the next over a
tensor of the tokens each slot still owes, which gives the same times as
stepping one token at a time (the test compares it with such a loop).

KV allocation (Kwon et al., PagedAttention, SOSP 2023, §3.1 and §4). At each
decode step s = 1 … o of a request with prompt p and output o, the cache holds
p + s tokens. Slots held: max_len (contiguous, reserved for the longest
sequence), p + o (contiguous, an oracle that knows the final length), or
b·ceil((p + s)/b) (paged: only the blocks filled so far). Sums over steps are
in closed form: Σ_{t=1}^{n} ceil(t/b) = b·q(q+1)/2 + r(q+1) with n = qb + r.
The requests that fit are the budget over the mean slots held per step, as
in the paged-attention card's simulation; no allocator runs, so external
fragmentation is not counted.
"""

import math

import numpy as np
import torch

from app.demos.specs import inference_batching as spec
from app.demos.specs.inference_batching import BatchingParams
from app.worker.demo import Demo, Outcome, Series

BLOCK_SIZES = [2**k for k in range(9)]  # 1 … 256 tokens per block

# --- workload ------------------------------------------------------------------------


def workload(params: BatchingParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prompt and output lengths (int64) and arrival times (float64), seeded.

    Example:
        >>> p, o, a = workload(BatchingParams(requests=3, output_lengths="constant"))
        >>> p.tolist(), o.tolist(), a.tolist()
        ([111, 88, 177], [300, 300, 300], [0.0, 0.0, 0.0])
    """
    rng = np.random.default_rng(params.seed)
    n, max_len, mean = params.requests, params.max_len, params.output_mean
    prompt = np.clip(
        rng.lognormal(params.prompt_mu, params.prompt_sigma, n).astype(int), 4, max_len // 2
    )
    if params.output_lengths == "exponential":
        drawn = rng.exponential(mean, n).astype(int) + 1
    elif params.output_lengths == "uniform":
        drawn = rng.integers(1, 2 * mean, n)  # 1 … 2·mean − 1: mean `mean`
    else:
        drawn = np.full(n, mean)
    output = np.clip(drawn, 1, max_len - prompt)
    if params.load > 0:
        arrive = np.cumsum(rng.exponential(mean / (params.load * params.slots), n))
    else:
        arrive = np.zeros(n)
    return prompt.astype(np.int64), output.astype(np.int64), arrive.astype(np.float64)


# --- scheduling ----------------------------------------------------------------------


def static_batching(
    arrive: torch.Tensor, out: torch.Tensor, slots: int
) -> tuple[torch.Tensor, int]:
    """Request-level batching: completion times and decode steps run.

    Each batch takes every request waiting when it starts, up to ``slots``, and
    runs until its longest one ends; the engine idles until the next arrival
    when the queue is empty.

    Example:
        >>> done, steps = static_batching(torch.zeros(3), torch.tensor([5, 1, 2]), 2)
        >>> done.tolist(), steps
        ([5.0, 5.0, 7.0], 7)
    """
    n = len(out)
    done = torch.empty(n, dtype=torch.float64)
    t, i, steps = 0.0, 0, 0
    while i < n:
        t = max(t, float(arrive[i]))
        waiting = int(torch.searchsorted(arrive, t, right=True))
        j = min(i + slots, waiting)
        longest = int(out[i:j].max())
        t += longest
        steps += longest
        done[i:j] = t
        i = j
    return done, steps


def continuous_batching(
    arrive: torch.Tensor, out: torch.Tensor, slots: int
) -> tuple[torch.Tensor, int]:
    """Iteration-level batching: completion times and decode steps run.

    Before every step, free slots take the waiting requests in arrival order;
    after it, requests whose last token is out return. Event-driven: the time
    jumps by the steps until the next completion or admission.

    Example:
        >>> done, steps = continuous_batching(torch.zeros(3), torch.tensor([5, 1, 2]), 2)
        >>> done.tolist(), steps
        ([5.0, 1.0, 3.0], 5)
    """
    n = len(out)
    done = torch.empty(n, dtype=torch.float64)
    left = torch.zeros(slots, dtype=torch.int64)  # tokens each slot still owes; 0 = free
    owner = torch.full((slots,), -1, dtype=torch.int64)
    t, i, steps = 0.0, 0, 0
    while True:
        active = left > 0
        busy = int(active.sum())
        if busy == 0:
            if i == n:
                break
            t = max(t, float(arrive[i]))  # idle until the next arrival
        arrived = int(torch.searchsorted(arrive, t, right=True))
        admit = min(slots - busy, arrived - i)
        if admit > 0:
            free = (~active).nonzero().flatten()[:admit]
            left[free] = out[i : i + admit]
            owner[free] = torch.arange(i, i + admit)
            i += admit
            active = left > 0
            busy += admit
        jump = int(left[active].min())  # steps to the next completion
        if busy < slots and i < n:  # or to the next step boundary at which someone can join
            jump = min(jump, max(1, math.ceil(float(arrive[i]) - t)))
        t += jump
        steps += jump
        left[active] -= jump
        finished = active & (left == 0)
        done[owner[finished]] = t
    return done, steps


# --- KV-cache allocation -------------------------------------------------------------


def ceil_sum(n: torch.Tensor, b: int) -> torch.Tensor:
    """Σ_{t=1}^{n} ceil(t / b), elementwise.

    Example:
        >>> ceil_sum(torch.tensor([0, 1, 4, 5, 9]), 4).tolist()  # 1+1+1+1+2+2+2+2+3 = 15
        [0, 1, 4, 6, 15]
    """
    q, r = n // b, n % b
    return b * q * (q + 1) // 2 + r * (q + 1)


def kv_slot_steps(
    prompt: torch.Tensor, out: torch.Tensor, max_len: int, b: int
) -> dict[str, float]:
    """Slot-steps held and filled, summed over every decode step of every request."""
    final = prompt + out
    stored = out * prompt + out * (out + 1) // 2  # Σ_{s=1}^{o} (p + s)
    return {
        "steps": float(out.sum()),
        "stored": float(stored.sum()),
        "max": float((out * max_len).sum()),
        "exact": float((out * final).sum()),
        "paged": float((b * (ceil_sum(final, b) - ceil_sum(prompt, b))).sum()),
        "final": float((out * final).sum()),
    }


def last_block_waste(prompt: torch.Tensor, out: torch.Tensor, b: int) -> torch.Tensor:
    """Empty slots in each request's last block once it has finished."""
    final = prompt + out
    return b * (-(-final // b)) - final


# --- compute -------------------------------------------------------------------------


def compute(params: BatchingParams, device: torch.device) -> Outcome:
    """Draw the workload, schedule it both ways, and count KV slots three ways."""
    del device  # integer bookkeeping: CPU whatever the worker's device
    prompt_np, out_np, arrive_np = workload(params)
    prompt, out = torch.from_numpy(prompt_np), torch.from_numpy(out_np)
    arrive = torch.from_numpy(arrive_np)
    tokens = float(out.sum())
    slots = params.slots

    static_done, static_steps = static_batching(arrive, out, slots)
    cont_done, cont_steps = continuous_batching(arrive, out, slots)
    static_latency = float((static_done - arrive).mean())
    cont_latency = float((cont_done - arrive).mean())

    b = params.block_size
    held = kv_slot_steps(prompt, out, params.max_len, b)
    per_step = {name: held[name] / held["steps"] for name in ("max", "exact", "paged")}
    waste = last_block_waste(prompt, out, b)
    budget = params.kv_budget_tokens

    outputs = {
        "mean_prompt": float(prompt.double().mean()),
        "mean_output": float(out.double().mean()),
        "static_steps": float(static_steps),
        "continuous_steps": float(cont_steps),
        "static_tokens_per_step": tokens / static_steps,
        "continuous_tokens_per_step": tokens / cont_steps,
        "static_utilisation": tokens / (slots * static_steps),
        "continuous_utilisation": tokens / (slots * cont_steps),
        "static_mean_latency": static_latency,
        "continuous_mean_latency": cont_latency,
        "throughput_gain": static_steps / cont_steps,
        "latency_ratio": static_latency / cont_latency,
        "max_used": held["stored"] / held["max"],
        "max_reserved": (held["exact"] - held["stored"]) / held["max"],
        "max_internal": (held["max"] - held["exact"]) / held["max"],
        "exact_used": held["stored"] / held["exact"],
        "paged_used": held["stored"] / held["paged"],
        "paged_waste_mean": float(waste.double().mean()),
        "paged_waste_max": float(waste.max()),
        "max_requests": float(math.floor(budget / per_step["max"])),
        "exact_requests": float(math.floor(budget / per_step["exact"])),
        "paged_requests": float(math.floor(budget / per_step["paged"])),
    }
    theory = {"paged_waste_mean": (b - 1) / 2, "max_requests": float(budget // params.max_len)}
    if params.output_lengths == "exponential" and params.load == 0:
        harmonic = sum(1 / k for k in range(1, slots + 1))
        theory["static_utilisation"] = 1 / harmonic
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=_series(outputs, prompt, out, params),
        notes=_notes(params),
    )


def _series(
    outputs: dict[str, float], prompt: torch.Tensor, out: torch.Tensor, params: BatchingParams
) -> list[Series]:
    used_by_block = []
    for b in BLOCK_SIZES:
        held = kv_slot_steps(prompt, out, params.max_len, b)
        used_by_block.append(held["stored"] / held["paged"])
    return [
        Series(
            name="slot-steps producing a needed token",
            kind="bar",
            x=["static", "continuous"],
            y=[outputs["static_utilisation"], outputs["continuous_utilisation"]],
            x_label="scheduler",
            y_label="share of slot-steps",
        ),
        Series(
            name="mean completion time",
            kind="bar",
            x=["static", "continuous"],
            y=[outputs["static_mean_latency"], outputs["continuous_mean_latency"]],
            x_label="scheduler",
            y_label="decode steps from arrival",
        ),
        Series(
            name="held KV slots that hold a token",
            kind="bar",
            x=["max-length", "exact-length (oracle)", f"paged, b = {params.block_size}"],
            y=[outputs["max_used"], outputs["exact_used"], outputs["paged_used"]],
            x_label="allocation",
            y_label="share of held slots",
        ),
        Series(
            name="paged: held slots that hold a token, by block size",
            kind="line",
            x=[float(b) for b in BLOCK_SIZES],
            y=used_by_block,
            x_label="block size b (tokens)",
            y_label="share of held slots",
        ),
    ]


def _notes(params: BatchingParams) -> list[str]:
    return [
        "Every decode step costs the same whatever the batch size, and prefill is folded into "
        "a request's first step: close while decoding is bound by memory traffic, not at "
        "large batches.",
        "Requests that fit = floor(budget / mean slots held per decode step); no allocator "
        "runs, so external fragmentation is not counted, and prompt blocks are not shared.",
        f"Contiguous allocation reserves max_len = {params.max_len} slots per request; the "
        "oracle reserves each request's final length.",
    ]


# --- the demo ------------------------------------------------------------------------

BATCHING = Demo(spec=spec.BATCHING, compute=compute)

"""``collectives``: all-reduce, reduce-scatter, all-gather and a ring all-reduce on real ranks.

N CPU processes form a ``torch.distributed`` group on the gloo backend
(:func:`app.worker.demos._ranks.run_ranks`), each with its own buffer of S
bytes. Every rank then

1. runs gloo's ``dist.all_reduce`` (sum), and ``dist.reduce_scatter`` followed
   by ``dist.all_gather``, and compares both with the sum of all the ranks'
   buffers computed locally, rank 0 first (each rank can draw every rank's
   buffer from the seed);
2. runs a ring all-reduce written with ``dist.isend``/``dist.irecv``: N − 1
   reduce-scatter steps, each sending one S/N chunk to the right neighbour,
   which adds it to its own, then N − 1 all-gather steps passing the finished
   chunks on (the algorithm of nccl-tests' ``PERFORMANCE.md`` and Patarasuk &
   Yuan 2009). It counts the bytes it hands to ``isend`` and ``irecv``:
   theory 2(N − 1)/N · S per rank, (N − 1)/N · S per phase;
3. computes a Megatron-LM MLP, Z = GeLU(XA)B (Shoeybi et al. 2019, §3): A
   split by columns, GeLU on the local slice, B split by rows, one
   ``dist.all_reduce`` of the partial outputs, then B's bias once; and, for
   contrast, A split by rows with the GeLU applied to the partial sums.

Whole numbers stored as floats add exactly in any order, so with
``values=integers`` every method must agree bit for bit; with normal floats
the order of the additions shows in the last bits.
"""

import hashlib
import math
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F

from app.demos.specs import distributed_collectives as spec
from app.demos.specs.distributed_collectives import CollectivesParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import DTYPES
from app.worker.demos._ranks import run_ranks

INTEGER_RANGE = (-1000, 1000)
"""Whole values drawn in [-1000, 1000): sums of 8 stay far inside fp32's exact integers."""
THEORY_RANKS = list(range(2, 65))


# --- in each rank's process ----------------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    """What one rank handed to ``isend`` and got from ``irecv`` in the ring all-reduce."""

    reduce_scatter_sent: int
    all_gather_sent: int
    received: int
    steps: int


@dataclass(frozen=True)
class RankReport:
    """One rank's measurements, sent back to the parent."""

    traffic: Traffic
    mismatches: dict[str, int]
    max_abs_error: float
    digests: tuple[str, str, str]
    mlp_max_abs_diff: float
    mlp_output_max_abs: float
    row_split_max_abs_diff: float


def rank_buffer(params: CollectivesParams, rank: int) -> torch.Tensor:
    """Rank ``rank``'s input: its own seeded draw, reproducible by any process."""
    generator = torch.Generator().manual_seed(params.seed * 16 + rank)
    dtype = DTYPES[params.dtype]
    if params.values == "integers":
        return torch.randint(*INTEGER_RANGE, (params.elements,), generator=generator, dtype=dtype)
    return torch.randn(params.elements, generator=generator, dtype=dtype)


def local_sum(params: CollectivesParams, world: int) -> torch.Tensor:
    """The element-wise sum of every rank's buffer, rank 0 first, in the buffers' precision."""
    total = torch.zeros(params.elements, dtype=DTYPES[params.dtype])
    for rank in range(world):
        total += rank_buffer(params, rank)
    return total


def reduce_scatter_all_gather(buffer: torch.Tensor, world: int) -> torch.Tensor:
    """gloo's ``reduce_scatter`` (rank r gets chunk r of the sum), then ``all_gather``."""
    mine = torch.empty(buffer.numel() // world, dtype=buffer.dtype)
    dist.reduce_scatter(mine, list(buffer.clone().chunk(world)))
    parts = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(parts, mine)
    return torch.cat(parts)


def ring_all_reduce(buffer: torch.Tensor, rank: int, world: int) -> tuple[torch.Tensor, Traffic]:
    """Sum ``buffer`` over the ranks along a ring; count the bytes this rank moves.

    Reduce-scatter: at step k rank r sends chunk (r − k) mod N to rank r + 1
    and adds the chunk (r − k − 1) mod N it receives from rank r − 1; after
    N − 1 steps it holds chunk (r + 1) mod N summed over every rank.
    All-gather: at step k it sends chunk (r + 1 − k) mod N and overwrites
    chunk (r − k) mod N with the finished one it receives.
    """
    result = buffer.clone()
    chunks = result.chunk(world)  # views: equal, since world divides the length
    incoming = torch.empty_like(chunks[0])
    right, left = (rank + 1) % world, (rank - 1) % world
    sent = [0, 0]
    received = steps = 0
    for phase in (0, 1):
        for step in range(world - 1):
            if phase == 0:
                outgoing, into = chunks[(rank - step) % world], incoming
            else:
                outgoing, into = chunks[(rank + 1 - step) % world], chunks[(rank - step) % world]
            requests = [
                dist.isend(outgoing, right, tag=steps),
                dist.irecv(into, left, tag=steps),
            ]
            for request in requests:
                if request is not None:
                    request.wait()
            sent[phase] += outgoing.numel() * outgoing.element_size()
            received += into.numel() * into.element_size()
            steps += 1
            if phase == 0:
                chunks[(rank - step - 1) % world].add_(incoming)
    return result, Traffic(sent[0], sent[1], received, steps)


def tensor_parallel_mlp(params: CollectivesParams, rank: int, world: int) -> tuple[float, ...]:
    """Megatron's column-then-row split of GeLU(XA + a)B + b against the unsplit MLP.

    ``nn.Linear`` stores Aᵀ, so the columns of A are rows (dim 0) of the first
    weight and the rows of B are columns (dim 1) of the second. Returns the
    largest difference from the unsplit output, that output's largest
    magnitude, and the difference when A is split by rows instead.
    """
    generator = torch.Generator().manual_seed(params.seed * 16 + 8)
    h, f64 = params.hidden, torch.float64
    w1 = torch.randn(4 * h, h, generator=generator, dtype=f64) / math.sqrt(h)
    b1 = torch.randn(4 * h, generator=generator, dtype=f64) * 0.1
    w2 = torch.randn(h, 4 * h, generator=generator, dtype=f64) / math.sqrt(4 * h)
    b2 = torch.randn(h, generator=generator, dtype=f64) * 0.1
    x = torch.randn(params.tokens, h, generator=generator, dtype=f64)
    full = F.gelu(x @ w1.T + b1) @ w2.T + b2

    w1_mine, b1_mine = w1.tensor_split(world, dim=0)[rank], b1.tensor_split(world)[rank]
    partial = F.gelu(x @ w1_mine.T + b1_mine) @ w2.tensor_split(world, dim=1)[rank].T
    dist.all_reduce(partial)  # Megatron's g: the one forward all-reduce
    split = partial + b2  # the bias once, after the sum

    pre = x.tensor_split(world, dim=1)[rank] @ w1.tensor_split(world, dim=1)[rank].T
    if rank == 0:
        pre += b1
    wrong = F.gelu(pre)  # GeLU of a partial sum: GeLU(a + b) ≠ GeLU(a) + GeLU(b)
    dist.all_reduce(wrong)
    row_split = wrong @ w2.T + b2
    return (
        (split - full).abs().max().item(),
        full.abs().max().item(),
        (row_split - full).abs().max().item(),
    )


def rank_work(rank: int, world: int, params: CollectivesParams) -> RankReport:
    """Everything one rank measures (runs inside the gloo group)."""
    mine = rank_buffer(params, rank)
    local = local_sum(params, world)
    reduced = mine.clone()
    dist.all_reduce(reduced)
    rs_ag = reduce_scatter_all_gather(mine, world)
    ring, traffic = ring_all_reduce(mine, rank, world)
    mlp = tensor_parallel_mlp(params, rank, world)
    return RankReport(
        traffic=traffic,
        mismatches={
            "allreduce_vs_rs_ag_mismatch": int((reduced != rs_ag).sum()),
            "allreduce_vs_local_mismatch": int((reduced != local).sum()),
            "ring_vs_allreduce_mismatch": int((ring != reduced).sum()),
            "ring_vs_local_mismatch": int((ring != local).sum()),
        },
        max_abs_error=max((result - local).abs().max().item() for result in (reduced, rs_ag, ring)),
        digests=tuple(_digest(result) for result in (reduced, rs_ag, ring)),  # type: ignore[arg-type]
        mlp_max_abs_diff=mlp[0],
        mlp_output_max_abs=mlp[1],
        row_split_max_abs_diff=mlp[2],
    )


def _digest(tensor: torch.Tensor) -> str:
    return hashlib.sha256(tensor.numpy().tobytes()).hexdigest()


# --- in the worker -------------------------------------------------------------------


def ring_theory(world: int, buffer_bytes: float) -> float:
    """2(N − 1)/N · S: what each rank sends (and receives) in a ring all-reduce.

    Example:
        >>> ring_theory(8, 1.0)
        1.75
    """
    return 2 * (world - 1) / world * buffer_bytes


def compute(params: CollectivesParams, device: torch.device) -> Outcome:
    """Run the ranks, then put their reports together."""
    del device  # gloo runs on the CPU
    world = params.ranks
    reports = run_ranks(rank_work, world, params)
    size = params.elements * DTYPES[params.dtype].itemsize
    sent = [r.traffic.reduce_scatter_sent + r.traffic.all_gather_sent for r in reports]
    total = world * params.elements
    outputs = {
        "buffer_bytes": float(size),
        "sent_bytes": float(max(sent)),
        "received_bytes": float(max(r.traffic.received for r in reports)),
        "sent_over_buffer": max(sent) / size,
        "reduce_scatter_sent_over_buffer": max(r.traffic.reduce_scatter_sent for r in reports)
        / size,
        "sent_spread": float(max(sent) - min(sent)),
        "ring_steps": float(max(r.traffic.steps for r in reports)),
        **{
            name: sum(r.mismatches[name] for r in reports) / total for name in reports[0].mismatches
        },
        "max_abs_error": max(r.max_abs_error for r in reports),
        "ranks_identical": float(len({r.digests for r in reports}) == 1),
        "mlp_max_abs_diff": max(r.mlp_max_abs_diff for r in reports),
        "mlp_output_max_abs": reports[0].mlp_output_max_abs,
        "row_split_max_abs_diff": max(r.row_split_max_abs_diff for r in reports),
    }
    return Outcome(
        outputs=outputs,
        theory=_theory(params, size),
        series=_series(sent, world, size),
        notes=_notes(params),
    )


def _theory(params: CollectivesParams, size: int) -> dict[str, float]:
    world = params.ranks
    theory = {
        "sent_bytes": ring_theory(world, size),
        "received_bytes": ring_theory(world, size),
        "sent_over_buffer": ring_theory(world, 1.0),
        "reduce_scatter_sent_over_buffer": (world - 1) / world,
        "sent_spread": 0.0,
        "ring_steps": 2.0 * (world - 1),
        "ranks_identical": 1.0,
        "mlp_max_abs_diff": 0.0,
    }
    if params.values == "integers":  # exact sums: every method must agree bit for bit
        for name in spec.COLLECTIVES.outputs:
            if name.endswith("_mismatch"):
                theory[name] = 0.0
        theory["max_abs_error"] = 0.0
    return theory


def _series(sent: list[int], world: int, size: int) -> list[Series]:
    ranks = [f"rank {rank}" for rank in range(world)]
    return [
        Series(
            name="bytes sent (ring, measured)",
            kind="bar",
            x=ranks,
            y=[float(bytes_) for bytes_ in sent],
            x_label="rank",
            y_label="bytes sent in one all-reduce",
        ),
        Series(
            name="2(N−1)/N · S",
            kind="bar",
            x=ranks,
            y=[ring_theory(world, size)] * world,
            x_label="rank",
            y_label="bytes sent in one all-reduce",
        ),
        Series(
            name="2(N−1)/N (theory)",
            kind="line",
            x=[float(n) for n in THEORY_RANKS],
            y=[ring_theory(n, 1.0) for n in THEORY_RANKS],
            x_label="ranks N",
            y_label="bytes sent per rank / S",
        ),
    ]


def _notes(params: CollectivesParams) -> list[str]:
    notes = [
        "The ranks are CPU processes on one machine talking over loopback: the bytes are the "
        "algorithm's, the times would not be a network's.",
        "The byte count is the hand-written ring's; gloo's own all_reduce may use another "
        "algorithm, and its traffic is not counted.",
    ]
    if params.values == "normal":
        notes.append(
            "Float sums depend on the order of the additions: each method adds in its own "
            "order, so some elements differ from the local sum in the last bits."
        )
    return notes


# --- the demo ------------------------------------------------------------------------

COLLECTIVES = Demo(spec=spec.COLLECTIVES, compute=compute)

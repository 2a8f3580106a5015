"""``pipeline_schedule``: GPipe and 1F1B pipeline schedules simulated step by step.

A pipeline splits a model into p stages on p devices and a batch into m
micro-batches. Each stage runs a fixed list of operations, ``F i`` (forward of
micro-batch i, time 1) and ``B i`` (its backward, time ``backward_ratio``), in
order, each as soon as the stage is free and its input exists: ``F i`` on stage
s needs ``F i`` on stage s − 1, ``B i`` needs ``B i`` on stage s + 1 (on the
last stage, its own ``F i``). The order is the schedule:

- GPipe (Huang et al. 2018): every forward, then every backward.
- 1F1B, PipeDream-Flush (Narayanan et al. 2021, §2.2.1): stage s runs
  min(p − 1 − s, m) warm-up forwards, then alternates one forward and one
  backward, then drains the remaining backwards. ``torch.distributed.pipelining``'s
  ``Schedule1F1B`` runs the same order.

The simulation gives the timeline; from it the idle share of p × makespan
(theory (p − 1)/(m + p − 1): p − 1 forward and p − 1 backward slots of fill
and drain per stage, Megatron-LM §2.2.1, GPipe §2.3), and the most
micro-batches whose activations a stage holds at once (forward done, backward
not): m for GPipe, at most p − s on stage s for 1F1B. No torch: plain Python.
"""

from collections.abc import Iterator
from typing import Literal, NamedTuple

import torch

from app.demos.specs import distributed_pipeline as spec
from app.demos.specs.distributed_pipeline import PipelineParams
from app.worker.demo import Demo, Outcome, Series

Schedule = Literal["gpipe", "1f1b"]
Kind = Literal["F", "B"]
SCHEDULES: dict[Schedule, str] = {"gpipe": "GPipe", "1f1b": "1F1B"}
PREFIXES: dict[Schedule, str] = {"gpipe": "gpipe", "1f1b": "one_f_one_b"}
"""How each schedule's outputs are named (an output name cannot start with a digit)."""
SWEEP = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
"""Micro-batch counts of the bubble-versus-m series (the chosen m is added)."""
TIMELINE_MAX_TIME = 80
"""Timelines longer than this (in forward times) are left out of the notes."""


class Op(NamedTuple):
    """One operation in the timeline: stage, F or B, micro-batch, start and end time."""

    stage: int
    kind: Kind
    microbatch: int
    start: float
    end: float


def stage_order(
    stages: int, microbatches: int, schedule: Schedule, stage: int
) -> list[tuple[Kind, int]]:
    """The operations stage ``stage`` runs, in order.

    Example:
        >>> stage_order(2, 3, "1f1b", 0)
        [('F', 0), ('F', 1), ('B', 0), ('F', 2), ('B', 1), ('B', 2)]
    """
    forwards: list[tuple[Kind, int]] = [("F", i) for i in range(microbatches)]
    backwards: list[tuple[Kind, int]] = [("B", i) for i in range(microbatches)]
    if schedule == "gpipe":
        return forwards + backwards
    warmup = min(stages - 1 - stage, microbatches)
    order = forwards[:warmup]
    for i in range(microbatches - warmup):
        order += [forwards[warmup + i], backwards[i]]
    return order + backwards[microbatches - warmup :]


def simulate(stages: int, microbatches: int, schedule: Schedule, backward_ratio: float) -> list[Op]:
    """Run every stage's operations in order, each as soon as it can start.

    ``F i`` on stage s waits for ``F i`` on stage s − 1; ``B i`` for ``B i``
    on stage s + 1, or on the last stage for its own ``F i``.

    Raises:
        RuntimeError: no stage can move (a schedule whose order deadlocks).
    """
    orders = [stage_order(stages, microbatches, schedule, s) for s in range(stages)]
    ends: dict[Kind, list[list[float | None]]] = {
        kind: [[None] * microbatches for _ in range(stages)] for kind in ("F", "B")
    }
    position, free = [0] * stages, [0.0] * stages
    timeline: list[Op] = []
    while len(timeline) < 2 * stages * microbatches:
        moved = False
        for stage, order in enumerate(orders):
            while position[stage] < len(order):
                kind, i = order[position[stage]]
                if kind == "F":
                    ready = ends["F"][stage - 1][i] if stage > 0 else 0.0
                elif stage < stages - 1:
                    ready = ends["B"][stage + 1][i]
                else:
                    ready = ends["F"][stage][i]
                if ready is None:
                    break
                start = max(free[stage], ready)
                end = start + (1.0 if kind == "F" else backward_ratio)
                ends[kind][stage][i] = free[stage] = end
                timeline.append(Op(stage, kind, i, start, end))
                position[stage] += 1
                moved = True
        if not moved:
            raise RuntimeError(f"{schedule} deadlocks at stages {position}")
    return timeline


def makespan(timeline: list[Op]) -> float:
    return max(op.end for op in timeline)


def bubble(timeline: list[Op], stages: int) -> float:
    """Idle time over total time, all stages together: 1 − busy / (p × makespan)."""
    busy = sum(op.end - op.start for op in timeline)
    return 1.0 - busy / (stages * makespan(timeline))


def peak_activations(timeline: list[Op], stages: int) -> list[int]:
    """Per stage, the most micro-batches with forward done and backward not yet done.

    A backward that ends when a forward ends frees its activations first.
    """
    events: list[list[tuple[float, int]]] = [[] for _ in range(stages)]
    for op in timeline:
        events[op.stage].append((op.end, 1 if op.kind == "F" else -1))
    peaks = []
    for stage_events in events:
        held = peak = 0
        for _, change in sorted(stage_events):
            held += change
            peak = max(peak, held)
        peaks.append(peak)
    return peaks


def compute(params: PipelineParams, device: torch.device) -> Outcome:
    """Simulate both schedules; compare with the closed forms."""
    del device  # plain Python
    p, m, ratio = params.stages, params.microbatches, params.backward_ratio
    ideal = m * (1.0 + ratio)
    timelines = {name: simulate(p, m, name, ratio) for name in SCHEDULES}
    peaks = {name: peak_activations(timelines[name], p) for name in SCHEDULES}
    outputs: dict[str, float] = {"ideal_time": ideal}
    for name, prefix in PREFIXES.items():
        timeline = timelines[name]
        idle = p * makespan(timeline) - p * ideal
        outputs[f"{prefix}_bubble"] = bubble(timeline, p)
        outputs[f"{prefix}_bubble_over_ideal"] = idle / (p * ideal)
        outputs[f"{prefix}_time"] = makespan(timeline)
        outputs[f"{prefix}_peak_activations"] = float(max(peaks[name]))
    outputs["one_f_one_b_last_stage_peak"] = float(peaks["1f1b"][-1])
    share, over_ideal = (p - 1) / (m + p - 1), (p - 1) / m
    theory = {"ideal_time": ideal, "gpipe_peak_activations": float(m)}
    theory["one_f_one_b_peak_activations"] = float(min(p, m))
    theory["one_f_one_b_last_stage_peak"] = 1.0
    for prefix in PREFIXES.values():
        theory[f"{prefix}_bubble"] = share
        theory[f"{prefix}_bubble_over_ideal"] = over_ideal
        theory[f"{prefix}_time"] = (m + p - 1) * (1.0 + ratio)
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=[
            *_bubble_sweep(p, m, ratio),
            *_peak_series(peaks),
            *(_busy_series(timelines[name], SCHEDULES[name]) for name in SCHEDULES),
        ],
        notes=_timeline_notes(timelines, ratio),
    )


def _bubble_sweep(p: int, m: int, ratio: float) -> list[Series]:
    counts = sorted({*SWEEP, m})
    series = [
        Series(
            name=f"{label} (simulated)",
            kind="line",
            x=[float(n) for n in counts],
            y=[bubble(simulate(p, n, name, ratio), p) for n in counts],
            x_label="micro-batches m",
            y_label="bubble: idle / total time",
        )
        for name, label in SCHEDULES.items()
    ]
    series.append(
        Series(
            name="(p−1)/(m+p−1)",
            kind="line",
            x=[float(n) for n in counts],
            y=[(p - 1) / (n + p - 1) for n in counts],
            x_label="micro-batches m",
            y_label="bubble: idle / total time",
        )
    )
    return series


def _peak_series(peaks: dict[Schedule, list[int]]) -> list[Series]:
    return [
        Series(
            name=label,
            kind="bar",
            x=[f"stage {s}" for s in range(len(peaks[name]))],
            y=[float(peak) for peak in peaks[name]],
            x_label="stage",
            y_label="micro-batches stashed at once (peak)",
        )
        for name, label in SCHEDULES.items()
    ]


def _busy_series(timeline: list[Op], label: str) -> Series:
    """How many stages compute at each moment, as a step line: the fill and the drain."""
    changes: dict[float, int] = {}
    for op in timeline:
        changes[op.start] = changes.get(op.start, 0) + 1
        changes[op.end] = changes.get(op.end, 0) - 1
    x: list[float] = []
    y: list[float] = []
    busy = 0
    for time in sorted(changes):
        if changes[time] == 0:
            continue
        x.append(time)
        y.append(float(busy))
        busy += changes[time]
        x.append(time)
        y.append(float(busy))
    return Series(
        name=label, kind="line", x=x, y=y, x_label="time (forward = 1)", y_label="stages computing"
    )


def _timeline_notes(timelines: dict[Schedule, list[Op]], ratio: float) -> list[str]:
    """The timeline as text, one line per stage, when it is short and on a whole-number grid."""
    if not ratio.is_integer() or any(makespan(t) > TIMELINE_MAX_TIME for t in timelines.values()):
        return [
            "Timelines longer than 80 forward times, or with a fractional backward time, "
            "are shown as charts only."
        ]
    return [
        f"{SCHEDULES[name]}, stage {stage}: {line}"
        for name, timeline in timelines.items()
        for stage, line in enumerate(_grid(timeline))
    ]


def _grid(timeline: list[Op]) -> Iterator[str]:
    """Each stage's timeline, one cell per unit of time: ``F3`` or ``B3``, ``.`` when idle."""
    stages = 1 + max(op.stage for op in timeline)
    width = len(str(max(op.microbatch for op in timeline))) + 1
    for stage in range(stages):
        cells = ["." * width] * int(makespan(timeline))
        for op in timeline:
            if op.stage == stage:
                for t in range(int(op.start), int(op.end)):
                    cells[t] = f"{op.kind}{op.microbatch}".ljust(width)
        yield " ".join(cells)


# --- the demo ------------------------------------------------------------------------

PIPELINE_SCHEDULE = Demo(spec=spec.PIPELINE_SCHEDULE, compute=compute)

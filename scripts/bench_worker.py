"""Benchmark the demo worker's demos on the CPU, calling them directly (no HTTP).

Usage:
    python scripts/bench_worker.py              # p50/p95 per demo at default size,
                                                # then score_variance in torch vs NumPy
    python scripts/bench_worker.py --budget     # each demo's worst case: time and peak memory
    python scripts/bench_worker.py --threads 2 --repeats 30  # the worker uses 1 thread

Times are the ``elapsed_ms`` a result reports: the computation alone, after two
warm-up runs. ``--budget`` runs each worst case (``Demo.worst_cases``) twice in
each of ``--rounds`` fresh processes, after the warm-up the worker does at
start-up, and reports the median and slowest wall time, the CPU time of all
threads and the largest peak resident memory above the idle process (Linux
only): the figures in docs/demos.md. Run it on an otherwise idle machine:
other load inflates the wall times (the CPU time much less).
"""

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np
import torch

from app.worker.demos import DEMOS, get_demo
from app.worker.demos._common import CHUNK_ELEMENTS
from app.worker.demos.variance import ScoreVarianceParams, divisor_value

CPU = torch.device("cpu")


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 (inclusive method, so few samples still give a p95 inside their range)."""
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    return statistics.median(samples), cuts[18]


def time_demo(name: str, params: dict[str, Any], repeats: int) -> list[float]:
    demo = get_demo(name)
    validated = demo.validate(params)
    for _ in range(2):
        demo.run(validated, CPU)
    return [demo.run(validated, CPU).elapsed_ms for _ in range(repeats)]


def numpy_score_variance(params: ScoreVarianceParams) -> float:
    """The score_variance computation in NumPy: chunked fp64 draws, dots, moments, histogram."""
    rng = np.random.default_rng(params.seed)
    divisor = divisor_value(params.divisor, d_k=params.d_k, num_heads=params.num_heads)
    step = max(1, CHUNK_ELEMENTS // params.d_k)
    parts = []
    for start in range(0, params.samples, step):
        rows = min(params.samples, start + step) - start
        q = rng.standard_normal((rows, params.d_k))
        k = rng.standard_normal((rows, params.d_k))
        parts.append((q * k).sum(-1))
    scores = np.concatenate(parts) / divisor
    variance = float(scores.var(ddof=1))
    _ = float(scores.mean())
    _, edges = np.histogram(scores, bins=50)
    expected = params.d_k / divisor**2
    centres = (edges[:-1] + edges[1:]) / 2
    _ = (len(scores) * (edges[1] - edges[0]) / math.sqrt(2 * math.pi * expected)) * np.exp(
        -(centres**2) / (2 * expected)
    )
    return variance


def torch_vs_numpy(repeats: int) -> None:
    demo = get_demo("score_variance")
    params = demo.validate({})
    torch_ms, numpy_ms = [], []
    for _ in range(2):
        demo.run(params, CPU)
        numpy_score_variance(params)
    # Alternate the two so that both see the same machine load.
    for _ in range(repeats):
        torch_ms.append(demo.run(params, CPU).elapsed_ms)
        start = time.perf_counter()
        variance = numpy_score_variance(params)
        numpy_ms.append((time.perf_counter() - start) * 1000)
    torch_p50, numpy_p50 = statistics.median(torch_ms), statistics.median(numpy_ms)
    print(
        f"\nscore_variance at defaults (d_k {params.d_k}, {params.samples} samples), "
        f"{repeats} alternating runs:"
    )
    torch_variance = demo.run(params, CPU).outputs["variance"]
    print(f"  torch  p50 {torch_p50:8.1f} ms   variance {torch_variance:.4f}")
    print(f"  numpy  p50 {numpy_p50:8.1f} ms   variance {variance:.4f}")
    print(f"  torch / numpy time: {torch_p50 / numpy_p50:.2f}")


def measure_worst(name: str, index: int) -> dict[str, Any]:
    """In this (fresh) process: time one worst case twice (wall and CPU), and its peak memory.

    Every demo first runs once at its smallest parameters, as the worker's
    start-up does, so the first timed run is what the first request would see.
    """
    for demo in DEMOS.values():
        demo.run(demo.smallest(), CPU)
    demo = get_demo(name)
    params = demo.validate(demo.worst_cases[index])
    # Reset the process's peak resident size (Linux 4.0+), so that the peak
    # below is this demo's and not that of importing torch or the warm-up.
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    idle = _memory("VmRSS")
    times, cpu = [], []
    for _ in range(2):
        start = time.process_time()
        times.append(demo.run(params, CPU).elapsed_ms)
        cpu.append((time.process_time() - start) * 1000)
    return {"ms": times, "cpu_ms": cpu, "peak_mb": (_memory("VmHWM") - idle) / 2**20}


def budget(threads: int, rounds: int, only: list[str]) -> None:
    print(f"worst cases, {threads} threads, {rounds} fresh processes each:")
    print("after a warm-up as at the worker's start: wall time (median, slowest), CPU time of")
    print("all threads (median: on idle cores the wall time is at most this), largest peak memory")
    print(f"{'demo':20} {'p50 ms':>8} {'max ms':>8} {'CPU ms':>8} {'peak MB':>8}  params")
    for name, demo in DEMOS.items():
        if only and name not in only:
            continue
        for index, worst in enumerate(demo.worst_cases):
            command = [sys.executable, __file__, "--measure", name, str(index)]
            rows = []
            for _ in range(rounds):
                output = subprocess.run(
                    [*command, "--threads", str(threads)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                rows.append(json.loads(output.strip().splitlines()[-1]))
            times = [ms for row in rows for ms in row["ms"]]
            cpu = statistics.median(ms for row in rows for ms in row["cpu_ms"])
            peak = max(row["peak_mb"] for row in rows)
            print(
                f"{name:20} {statistics.median(times):8.0f} {max(times):8.0f} {cpu:8.0f} "
                f"{peak:8.0f}  {json.dumps(worst)}"
            )


def _memory(field: str) -> int:
    """A size from /proc/self/status (VmRSS: resident now, VmHWM: peak), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--threads", type=int, default=1, help="torch intra-op threads (the worker uses 1)"
    )
    parser.add_argument("--repeats", type=int, default=20, help="timed runs per demo")
    parser.add_argument("--budget", action="store_true", help="measure each demo's worst case")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per worst case")
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="DEMO", help="with --budget: just these demos"
    )
    parser.add_argument("--measure", nargs=2, metavar=("DEMO", "INDEX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.measure:
        print(json.dumps(measure_worst(args.measure[0], int(args.measure[1]))))
        return
    if args.budget:
        unknown = set(args.only) - set(DEMOS)
        if unknown:
            parser.error(
                f"unknown demo(s) {', '.join(sorted(unknown))}: the demos are {', '.join(DEMOS)}"
            )
        budget(args.threads, args.rounds, args.only)
        return
    print(f"torch {torch.__version__}, numpy {np.__version__}, {args.threads} threads, CPU")
    print(f"{'demo':20} {'p50 ms':>8} {'p95 ms':>8}")
    for name in DEMOS:
        p50, p95 = percentiles(time_demo(name, {}, args.repeats))
        print(f"{name:20} {p50:8.2f} {p95:8.2f}")
    torch_vs_numpy(args.repeats)


if __name__ == "__main__":
    main()

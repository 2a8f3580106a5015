"""``systems_capacity``: Little's law and latency against load by simulation; fan-out tails.

The queue: Poisson arrivals at rate λ = ρ·c·μ into c identical servers fed by
one first-come-first-served queue, service times exponential (M/M/c) or
lognormal with the same mean (M/G/c). Each request starts at the later of its
arrival and the moment a server frees up: for one server that is Lindley's
recursion, wait_{k+1} = max(0, wait_k + S_k − T_{k+1}), which unrolls to a
partial sum minus its running minimum (vectorised below); for c > 1 a heap of
the servers' free times hands each request the earliest free server, in
arrival order. L is then measured on the simulated path, as the area under
the count in system N(t) over a window divided by its length, and compared
with λ × W measured from the same requests: Little's law is checked, not
assumed. Theory beside it: Erlang C for M/M/c, Pollaczek–Khinchine for M/G/1.

The fan-out: a request waits for N leaves in parallel; each leaf call takes a
lognormal fast path, or with a small probability a lognormal slow path (a
pause, a cold cache). The request's latency is the slowest leaf's, so its CDF
is F^N, and the share of requests meeting at least one leaf above that
leaf's own p99 is 1 − 0.99^N (Dean & Barroso, "The Tail at Scale"). Hedging:
a leaf call still running at a chosen quantile h of its latency sends a
second copy and the first answer wins.

Random draws, in order, from numpy's ``default_rng(seed)``: n interarrival
gaps, n service times, then the fan-out's path choices, normal draws and the
hedges' second calls. The series draw from ``default_rng((seed, i))``.
"""

import heapq
import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import brentq  # type: ignore[import-untyped]
from scipy.special import ndtr  # type: ignore[import-untyped]

from app.demos.specs import systems_capacity as spec
from app.demos.specs.systems_capacity import CapacityParams
from app.worker.demo import Demo, Outcome, Series

# --- the queue ----------------------------------------------------------------------------------

WARM_UP = 0.1
"""Share of the first requests left out of the measurements: the queue starts empty."""

RHO_GRID = [round(0.1 * i, 1) for i in range(1, 10)]
"""Utilisations of the latency-against-load series."""

SERIES_REQUESTS = 10_000
"""Requests per point of the latency-against-load series (fewer if n is smaller)."""


@dataclass(frozen=True)
class QueuePath:
    """One simulated run: arrival, service start and departure time of each request, in ms."""

    arrive: np.ndarray
    start: np.ndarray
    depart: np.ndarray


def service_times(
    rng: np.random.Generator, n: int, mean_ms: float, service: str, sigma: float
) -> np.ndarray:
    """n service times with mean ``mean_ms``: exponential, or lognormal of shape σ."""
    if service == "exponential":
        return rng.exponential(mean_ms, n)
    # E[exp(m + σZ)] = exp(m + σ²/2): m = ln(mean) − σ²/2 keeps the mean.
    return rng.lognormal(math.log(mean_ms) - sigma**2 / 2, sigma, n)


def fifo_starts(arrive: np.ndarray, service: np.ndarray, servers: int) -> np.ndarray:
    """When each request starts service in a first-come-first-served queue with c servers.

    Example:
        >>> fifo_starts(np.array([0.0, 1.0, 2.0]), np.array([3.0, 1.0, 1.0]), 1).tolist()
        [0.0, 3.0, 4.0]
        >>> fifo_starts(np.array([0.0, 1.0, 2.0]), np.array([3.0, 1.0, 1.0]), 2).tolist()
        [0.0, 1.0, 2.0]
    """
    if servers == 1:
        # Lindley: the wait is the partial sum of (S_k − T_{k+1}) minus its running minimum.
        steps = service[:-1] - np.diff(arrive)
        sums = np.concatenate([[0.0], np.cumsum(steps)])
        starts: np.ndarray = arrive + (sums - np.minimum.accumulate(sums))
        return starts
    free = [0.0] * servers  # a heap of the times each server next falls idle
    begins = []
    for a, s in zip(arrive.tolist(), service.tolist(), strict=True):
        begin = max(a, free[0])  # the earliest free server takes the next request in line
        heapq.heapreplace(free, begin + s)
        begins.append(begin)
    return np.array(begins)


def simulate_queue(
    rng: np.random.Generator, params: CapacityParams, utilisation: float, n: int
) -> QueuePath:
    """Poisson arrivals at λ = ρ·c/E[S] and their service, through the c-server queue."""
    rate = utilisation * params.servers / params.service_ms  # arrivals per ms
    arrive = np.cumsum(rng.exponential(1 / rate, n))
    service = service_times(rng, n, params.service_ms, params.service, params.lognormal_sigma)
    start = fifo_starts(arrive, service, params.servers)
    return QueuePath(arrive, start, start + service)


def time_in_window(arrive: np.ndarray, depart: np.ndarray, t0: float, t1: float) -> float:
    """∫ N(t) dt over [t0, t1]: each request adds the part of its stay inside the window."""
    overlap = np.minimum(depart, t1) - np.maximum(arrive, t0)
    return float(np.clip(overlap, 0.0, None).sum())


@dataclass(frozen=True)
class QueueStats:
    """What the queue's measured window shows."""

    arrival_rate: float  # per second
    in_system: float
    mean_ms: float
    wait_ms: float
    p50_ms: float
    p99_ms: float
    wait_probability: float


def measure(path: QueuePath) -> QueueStats:
    """L from the path's N(t) over the window, and W from the requests arriving in it.

    The window runs from the first measured arrival (after the warm-up) to the
    last arrival; λ counts the arrivals after its start, over its length.
    """
    first = int(len(path.arrive) * WARM_UP)
    t0, t1 = float(path.arrive[first]), float(path.arrive[-1])
    sojourn = (path.depart - path.arrive)[first:]
    waits = (path.start - path.arrive)[first:]
    return QueueStats(
        arrival_rate=1000 * (len(path.arrive) - 1 - first) / (t1 - t0),
        in_system=time_in_window(path.arrive, path.depart, t0, t1) / (t1 - t0),
        mean_ms=float(sojourn.mean()),
        wait_ms=float(waits.mean()),
        p50_ms=float(np.quantile(sojourn, 0.5)),
        p99_ms=float(np.quantile(sojourn, 0.99)),
        wait_probability=float((waits > 0).mean()),
    )


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in M/M/c, offered load a = λ/μ < c.

    Erlang B by its stable recursion B_k = a·B_{k−1} / (k + a·B_{k−1}), then
    C = c·B / (c − a·(1 − B)).

    Example:
        >>> erlang_c(1, 0.8)   # one server: the wait probability is ρ
        0.8
    """
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    return servers * blocking / (servers - offered * (1 - blocking))


def queue_theory(params: CapacityParams, utilisation: float) -> dict[str, float]:
    """Exact steady-state values where a closed form exists (M/M/c; M/G/1; quantiles for M/M/1)."""
    c, mean, rho = params.servers, params.service_ms, utilisation
    if params.service == "exponential":
        waits = erlang_c(c, rho * c)
        wait_ms = waits * mean / (c * (1 - rho))  # C / (cμ − λ)
    elif c == 1:
        waits = rho  # Poisson arrivals see the server busy a share ρ of the time
        second_moment = mean**2 * math.exp(params.lognormal_sigma**2)
        wait_ms = rho * second_moment / (2 * mean * (1 - rho))  # Pollaczek–Khinchine
    else:
        return {}  # M/G/c has no closed form
    theory = {
        "wait_probability": waits,
        "wait_ms": wait_ms,
        "mean_ms": wait_ms + mean,
        "in_system": rho * c / mean * (wait_ms + mean),  # λW
    }
    if params.service == "exponential" and c == 1:
        # M/M/1: time in system is exponential with rate μ − λ = (1 − ρ)/E[S].
        scale = mean / (1 - rho)
        theory |= {"p50_ms": scale * math.log(2), "p99_ms": scale * math.log(100)}
    return theory


# --- the fan-out --------------------------------------------------------------------------------

LEAF_SIGMA = 0.25
"""Lognormal shape of both leaf paths around their medians."""


@dataclass(frozen=True)
class Leaves:
    """The leaf latency distribution: a fast and a slow lognormal path."""

    fast_ms: float
    slow_ms: float
    slow_share: float

    def cdf(self, t: float) -> float:
        """P(one leaf call ≤ t ms)."""
        log_t = math.log(t)
        fast = ndtr((log_t - math.log(self.fast_ms)) / LEAF_SIGMA)
        slow = ndtr((log_t - math.log(self.slow_ms)) / LEAF_SIGMA)
        return float((1 - self.slow_share) * fast + self.slow_share * slow)

    def hedged_cdf(self, t: float, hedge_ms: float) -> float:
        """P(a leaf call hedged at ``hedge_ms`` answers by t): the first call or the copy."""
        if t <= hedge_ms:
            return self.cdf(t)
        return 1 - (1 - self.cdf(t)) * (1 - self.cdf(t - hedge_ms))

    def quantile(self, q: float, hedge_ms: float | None = None) -> float:
        """The t with CDF(t) = q, by root-finding in log time."""
        low = min(self.fast_ms, self.slow_ms) * math.exp(-15 * LEAF_SIGMA)
        high = max(self.fast_ms, self.slow_ms) * math.exp(15 * LEAF_SIGMA)

        def gap(log_t: float) -> float:
            t = math.exp(log_t)
            return (self.cdf(t) if hedge_ms is None else self.hedged_cdf(t, hedge_ms)) - q

        return math.exp(brentq(gap, math.log(low), math.log(high), xtol=1e-13, rtol=1e-13))

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Leaf latencies in ms: the slow path with probability ``slow_share``."""
        slow = rng.random(shape) < self.slow_share
        medians = np.where(slow, math.log(self.slow_ms), math.log(self.fast_ms))
        return np.exp(medians + LEAF_SIGMA * rng.standard_normal(shape))


def leaves_of(params: CapacityParams) -> Leaves:
    return Leaves(params.leaf_ms, params.slow_ms, params.slow_share)


def hedge(
    rng: np.random.Generator, leaves: Leaves, latency: np.ndarray, hedge_ms: float
) -> tuple[np.ndarray, float]:
    """Each call still running at ``hedge_ms`` sends a copy then; the earlier answer wins."""
    late = latency > hedge_ms
    copies = leaves.draw(rng, (int(late.sum()),))
    hedged = latency.copy()
    hedged[late] = np.minimum(latency[late], hedge_ms + copies)
    return hedged, float(late.mean())


# --- the demo -----------------------------------------------------------------------------------


def compute(params: CapacityParams, device: torch.device) -> Outcome:
    """Simulate the queue and the fan-out and measure each; theory where it is exact."""
    del device  # numpy on the CPU: an event-by-event simulation gains nothing from a GPU
    rng = np.random.default_rng(params.seed)
    stats = measure(simulate_queue(rng, params, params.utilisation, params.requests))

    leaves = leaves_of(params)
    n = params.fanout
    latency = leaves.draw(rng, (params.fanout_requests, n))
    leaf_p99 = leaves.quantile(0.99)
    slowest = latency.max(axis=1)
    hedge_ms = leaves.quantile(params.hedge_quantile)
    hedged, extra = hedge(rng, leaves, latency, hedge_ms)

    outputs = {
        "arrival_rate": stats.arrival_rate,
        "in_system": stats.in_system,
        "littles_product": stats.arrival_rate / 1000 * stats.mean_ms,
        "mean_ms": stats.mean_ms,
        "wait_ms": stats.wait_ms,
        "p50_ms": stats.p50_ms,
        "p99_ms": stats.p99_ms,
        "wait_probability": stats.wait_probability,
        "leaf_p99_ms": float(np.quantile(latency, 0.99)),
        "fanout_p50_ms": float(np.quantile(slowest, 0.5)),
        "fanout_p99_ms": float(np.quantile(slowest, 0.99)),
        "slow_request_share": float((slowest > leaf_p99).mean()),
        "hedged_p99_ms": float(np.quantile(hedged.max(axis=1), 0.99)),
        "hedge_extra_load": extra,
    }
    # The slowest of N independent leaves is ≤ t with probability F(t)^N: its
    # q-quantile is the leaf's (q^(1/N))-quantile.
    theory = queue_theory(params, params.utilisation) | {
        "arrival_rate": 1000 * params.utilisation * params.servers / params.service_ms,
        "littles_product": stats.in_system,
        "leaf_p99_ms": leaf_p99,
        "fanout_p50_ms": leaves.quantile(0.5 ** (1 / n)),
        "fanout_p99_ms": leaves.quantile(0.99 ** (1 / n)),
        "slow_request_share": 1 - 0.99**n,
        "hedged_p99_ms": leaves.quantile(0.99 ** (1 / n), hedge_ms),
        "hedge_extra_load": 1 - params.hedge_quantile,
    }
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=[*_load_series(params), *_fanout_series(latency, leaf_p99)],
        notes=NOTES,
    )


NOTES = [
    "Theory for littles_product is the measured L: Little's law says the two agree, whatever "
    "the service distribution; they differ only by the requests that straddle the window's ends.",
    "Queue theory: Erlang C for exponential service (M/M/c), Pollaczek–Khinchine for "
    "lognormal service on one server (M/G/1), quantiles for M/M/1 only; M/G/c has none here.",
    "Near ρ = 1 the queue forgets its empty start slowly: short runs read below the steady state.",
    "Fan-out theory: the slowest of N independent leaves has CDF F^N; the share of requests "
    "meeting a leaf above the leaf's p99 is 1 − 0.99^N. Real leaves share machines and "
    "queues, so their slow moments are not independent.",
]


def _load_series(params: CapacityParams) -> list[Series]:
    """Mean and p99 time in system against utilisation, measured and (where exact) theory."""
    n = min(params.requests, SERIES_REQUESTS)
    rows = []
    for i, rho in enumerate(RHO_GRID):
        stats = measure(simulate_queue(np.random.default_rng((params.seed, i)), params, rho, n))
        rows.append((stats, queue_theory(params, rho)))
    lines = [
        ("mean time in system (simulated)", [s.mean_ms for s, _ in rows]),
        ("p50 time in system (simulated)", [s.p50_ms for s, _ in rows]),
        ("p99 time in system (simulated)", [s.p99_ms for s, _ in rows]),
    ]
    if rows[0][1]:
        lines.append(("mean time in system (theory)", [t["mean_ms"] for _, t in rows]))
    return [
        Series(
            name=name,
            kind="line",
            x=RHO_GRID,
            y=values,
            x_label="utilisation ρ",
            y_label="time in system (ms)",
        )
        for name, values in lines
    ]


def _fanout_series(latency: np.ndarray, leaf_p99: float) -> list[Series]:
    """Share of requests meeting a leaf above its p99, against the leaves waited for."""
    n = latency.shape[1]
    counts = sorted({int(k) for k in np.unique(np.geomspace(1, n, 12).round())} | {n})
    anyslow = np.logical_or.accumulate(latency > leaf_p99, axis=1)
    measured = [float(anyslow[:, k - 1].mean()) for k in counts]
    return [
        Series(
            name=name,
            kind="line",
            x=[float(k) for k in counts],
            y=values,
            x_label="leaves waited for N",
            y_label="share of requests with a leaf above its p99",
        )
        for name, values in (
            ("simulated", measured),
            ("1 − 0.99^N", [1 - 0.99**k for k in counts]),
        )
    ]


CAPACITY = Demo(spec=spec.CAPACITY, compute=compute)

"""``systems_capacity``: a simulated queue (Little's law, latency against load) and fan-out tails.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/systems_capacity.py``. No torch here.
"""

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_REQUESTS = 100_000
"""Requests through the queue: the c > 1 heap loop over 100,000 takes about 0.25 s."""

MAX_LEAF_DRAWS = 2**20
"""Cap on fan-out requests × leaves: 1,048,576 latencies (8 MB an array) per draw."""

MAX_UTILISATION = 0.98
"""Highest load the form offers; at 1 or above the queue has no steady state."""


class CapacityParams(DemoParams):
    servers: int = Field(
        1,
        ge=1,
        le=64,
        title="Servers c",
        description="Identical servers taking requests from one first-come-first-served queue.",
    )
    service_ms: float = Field(
        100.0,
        ge=0.1,
        le=10_000.0,
        title="Mean service time 1/μ (ms)",
        description="Mean time one server spends on one request, in milliseconds.",
    )
    utilisation: float = Field(
        0.8,
        ge=0.01,
        le=MAX_UTILISATION,
        title="Utilisation ρ",
        description="λ/(cμ): the share of server time the arrivals ask for. Below 1; at 1 or "
        "above the queue grows without bound.",
    )
    service: Literal["exponential", "lognormal"] = Field(
        "exponential",
        title="Service times",
        description="exponential (M/M/c), or lognormal with the same mean and shape σ (M/G/c).",
    )
    lognormal_sigma: float = Field(
        1.0,
        ge=0.1,
        le=2.5,
        title="Lognormal σ",
        description="Shape of lognormal service times (the log's standard deviation); ignored "
        "for exponential ones. Squared coefficient of variation exp(σ²) − 1.",
    )
    requests: int = Field(
        100_000,
        ge=1_000,
        le=MAX_REQUESTS,
        title="Requests n",
        description="Requests simulated through the queue; the first 10% warm it up and are "
        "left out of the measurements.",
    )
    fanout: int = Field(
        100,
        ge=1,
        le=1_000,
        title="Fan-out N",
        description="Leaves (shards, feature lookups) one request waits for in parallel.",
    )
    leaf_ms: float = Field(
        10.0,
        ge=0.1,
        le=1_000.0,
        title="Leaf median (ms)",
        description="Median latency of a leaf on its usual, fast path.",
    )
    slow_ms: float = Field(
        200.0,
        ge=0.1,
        le=10_000.0,
        title="Slow-leaf median (ms)",
        description="Median latency of a leaf when it hits its slow path (a pause, a cold cache).",
    )
    slow_share: float = Field(
        0.02,
        ge=0.0,
        le=0.2,
        title="Slow-path share",
        description="Probability that one leaf call takes the slow path. Above 1%, one leaf's "
        "p99 lies inside the slow path.",
    )
    hedge_quantile: float = Field(
        0.95,
        ge=0.5,
        le=0.999,
        title="Hedge after quantile",
        description="A leaf call still running at this quantile of the leaf latency sends a "
        "second copy to another replica; the first answer wins.",
    )
    fanout_requests: int = Field(
        10_000,
        ge=100,
        le=100_000,
        validate_default=True,
        title="Fan-out requests",
        description="Requests drawn for the fan-out; requests × fan-out at most 1,048,576.",
    )
    seed: Seed = 0

    @field_validator("utilisation", mode="before")
    @classmethod
    def _stable(cls, utilisation: Any) -> Any:
        if isinstance(utilisation, int | float) and utilisation >= 1:
            raise PydanticCustomError(
                "unstable_queue",
                "utilisation must be below 1, got {rho}: at ρ ≥ 1 the queue is unstable, requests "
                "arrive at least as fast as the servers finish them and the queue grows "
                "without bound; set utilisation to at most {top} (in a real system, add "
                "servers so that λ/(cμ) falls below 1)",
                {"rho": utilisation, "top": MAX_UTILISATION},
            )
        return utilisation

    @field_validator("fanout_requests")
    @classmethod
    def _draws_fit(cls, requests: int, info: ValidationInfo) -> int:
        fanout = info.data.get("fanout")
        if fanout is not None and requests * fanout > MAX_LEAF_DRAWS:
            raise PydanticCustomError(
                "leaf_draws",
                "fanout_requests × fanout must be at most {cap}, got {requests} × {fanout}: "
                "lower fanout_requests to {fit} or lower fanout",
                {
                    "cap": f"{MAX_LEAF_DRAWS:,}",
                    "requests": requests,
                    "fanout": fanout,
                    "fit": MAX_LEAF_DRAWS // fanout,
                },
            )
        return requests


CAPACITY = DemoSpec(
    name="systems_capacity",
    version=1,
    title="Capacity by simulation: Little's law, latency against load, fan-out tails",
    description="A discrete-event simulation of a c-server first-come-first-served queue with "
    "Poisson arrivals: the time-average number in the system against arrival rate × mean "
    "time in system (Little's law), and the median and p99 latency as utilisation rises, "
    "beside M/M/c (Erlang C) and M/G/1 theory. Then a request that waits for N parallel "
    "leaves with a slow path: the p99 of the slowest leaf against one leaf's, the share of "
    "requests that meet a leaf slower than its p99 against 1 − 0.99^N, and hedged requests.",
    params=CapacityParams,
    outputs={
        "arrival_rate": "Arrivals per second in the measured window (after the warm-up).",
        "in_system": "L: the time-average number of requests in the system (queued or in "
        "service), the area under the simulated count N(t) over the window ÷ its length.",
        "littles_product": "λW: measured arrival rate × mean time in system of the requests "
        "arriving in the window, in requests.",
        "mean_ms": "W: mean time in system (wait + service) of the measured requests, ms.",
        "wait_ms": "Mean time spent queued before service starts, ms.",
        "p50_ms": "Median time in system, ms.",
        "p99_ms": "99th percentile of the time in system, ms.",
        "wait_probability": "Share of measured requests that found every server busy and waited.",
        "leaf_p99_ms": "99th percentile of one leaf call's latency, measured on all leaf calls.",
        "fanout_p50_ms": "Median latency of a request that waits for all N leaves (their max).",
        "fanout_p99_ms": "99th percentile of that max: the request's p99.",
        "slow_request_share": "Share of requests with at least one leaf slower than one leaf's "
        "p99 (the exact quantile of the leaf distribution).",
        "hedged_p99_ms": "The request's p99 when each leaf call still running at the hedge "
        "quantile sends a second copy and the first answer wins.",
        "hedge_extra_load": "Extra leaf calls hedging sends, as a share of the first calls.",
    },
    worst_cases=(
        {"servers": 64, "utilisation": MAX_UTILISATION, "requests": MAX_REQUESTS},
        {
            "servers": 64,
            "utilisation": MAX_UTILISATION,
            "requests": MAX_REQUESTS,
            "service": "lognormal",
            "lognormal_sigma": 2.5,
            "fanout": 1_000,
            "fanout_requests": MAX_LEAF_DRAWS // 1_000,
            "slow_share": 0.2,
        },
    ),
    uses_device=False,
)

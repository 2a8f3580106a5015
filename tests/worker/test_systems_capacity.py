"""systems_capacity: the queue against a plain-Python simulation, Erlang C and M/M/1; fan-out exactly.

Tolerances of the card claims come from 30 seeds at each setting (docs/demos.md):
each is wider than the spread seen there.
"""

import math

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy.stats import binomtest, lognorm

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos.systems_capacity import (
    LEAF_SIGMA,
    fifo_starts,
    leaves_of,
    measure,
    simulate_queue,
    time_in_window,
)
from tests.worker.conftest import RunDemo


def fifo_by_hand(arrive: list[float], service: list[float], servers: int) -> list[float]:
    """Start times in a c-server first-come-first-served queue, one request at a time."""
    free = [0.0] * servers
    starts = []
    for a, s in zip(arrive, service, strict=True):
        k = min(range(servers), key=lambda i: free[i])  # the server that falls idle first
        start = max(a, free[k])
        free[k] = start + s
        starts.append(start)
    return starts


def area_by_event_sweep(arrive: list[float], depart: list[float], t0: float, t1: float) -> float:
    """∫ N(t) dt over [t0, t1], walking the arrivals (+1) and departures (−1) in time order."""
    events = sorted([(a, 1) for a in arrive] + [(d, -1) for d in depart])
    count, area, clock = 0, 0.0, t0
    for time, step in events:
        if time > clock:
            area += count * (min(time, t1) - clock) if clock < t1 else 0.0
            clock = max(clock, min(time, t1))
        count += step
    return area + count * max(0.0, t1 - clock)


def erlang_c_by_hand(servers: int, offered: float) -> float:
    """Erlang C from its textbook sum: P(wait) in M/M/c with offered load a = λ/μ."""
    rho = offered / servers
    head = sum(offered**k / math.factorial(k) for k in range(servers))
    tail = offered**servers / math.factorial(servers) / (1 - rho)
    return tail / (head + tail)


def params_of(**params: object):  # type: ignore[no-untyped-def]
    return get_demo("systems_capacity").validate(params)


@pytest.mark.parametrize("servers", [1, 2, 3, 7])
def test_fifo_starts_match_a_plain_python_queue(servers: int) -> None:
    rng = np.random.default_rng(servers)
    for rate in (0.5, 2.0, 8.0):  # light to overloaded
        arrive = np.cumsum(rng.exponential(1 / rate, 400))
        service = rng.lognormal(0.0, 1.0, 400)
        by_hand = fifo_by_hand(arrive.tolist(), service.tolist(), servers)
        assert fifo_starts(arrive, service, servers) == pytest.approx(by_hand, abs=1e-9)


def test_one_server_by_lindley_equals_the_heap() -> None:
    rng = np.random.default_rng(4)
    arrive = np.cumsum(rng.exponential(1.0, 2000))
    service = rng.exponential(0.9, 2000)
    lindley = fifo_starts(arrive, service, 1)
    assert lindley == pytest.approx(fifo_by_hand(arrive.tolist(), service.tolist(), 1), abs=1e-9)
    assert (lindley >= arrive).all()


def test_littles_law_is_an_identity_on_the_whole_path() -> None:
    # From the first arrival to the last departure every request is inside the window,
    # so ∫ N(t) dt = Σ W exactly, i.e. L = λW with λ = n / T: Little's identity.
    for servers, service in ((1, "exponential"), (3, "lognormal")):
        params = params_of(servers=servers, service=service, requests=2000, utilisation=0.85)
        path = simulate_queue(np.random.default_rng(1), params, 0.85, 2000)
        arrive, depart = path.arrive.tolist(), path.depart.tolist()
        t0, t1 = 0.0, max(depart)
        area = area_by_event_sweep(arrive, depart, t0, t1)
        assert area == pytest.approx(
            sum(d - a for a, d in zip(arrive, depart, strict=True)), rel=1e-12
        )
        assert time_in_window(path.arrive, path.depart, t0, t1) == pytest.approx(area, rel=1e-12)
        # and on a window that cuts through requests' stays
        t0, t1 = arrive[500], arrive[1500]
        assert time_in_window(path.arrive, path.depart, t0, t1) == pytest.approx(
            area_by_event_sweep(arrive, depart, t0, t1), rel=1e-12
        )


def test_measured_l_is_the_area_under_the_path_not_lambda_w() -> None:
    # L must come from N(t) on the path: an event sweep over the measured window (from the
    # first request after the 10% warm-up to the last arrival) ÷ its length. λW from the same
    # requests differs from it by the stays that straddle the window's ends, so a demo that
    # reported λW as L would fail the first assertion or the second.
    params = params_of(servers=2, requests=1000, utilisation=0.9)
    path = simulate_queue(np.random.default_rng(3), params, 0.9, 1000)
    arrive, depart = path.arrive.tolist(), path.depart.tolist()
    t0, t1 = arrive[100], arrive[-1]
    stats = measure(path)
    assert stats.in_system == pytest.approx(
        area_by_event_sweep(arrive, depart, t0, t1) / (t1 - t0), rel=1e-12
    )
    lambda_w = stats.arrival_rate / 1000 * stats.mean_ms
    assert abs(stats.in_system - lambda_w) > 1e-6 * lambda_w


@pytest.mark.parametrize(("servers", "rho"), [(1, 0.8), (4, 0.7), (16, 0.9), (64, 0.98)])
def test_erlang_c_matches_the_textbook_sum(run: RunDemo, servers: int, rho: float) -> None:
    theory = run("systems_capacity", servers=servers, utilisation=rho, requests=1000).theory
    waits = erlang_c_by_hand(servers, rho * servers)
    assert theory["wait_probability"] == pytest.approx(waits, rel=1e-10)
    mean, lam = 100.0, rho * servers / 100.0  # ms and arrivals per ms
    wait_ms = waits / (servers / mean - lam)  # C / (cμ − λ)
    assert theory["wait_ms"] == pytest.approx(wait_ms, rel=1e-10)
    assert theory["mean_ms"] == pytest.approx(wait_ms + mean, rel=1e-10)
    assert theory["in_system"] == pytest.approx(lam * (wait_ms + mean), rel=1e-10)


def test_mm1_theory_is_one_over_mu_minus_lambda(run: RunDemo) -> None:
    for rho in (0.5, 0.8, 0.9):
        theory = run("systems_capacity", utilisation=rho, requests=1000).theory
        mu, lam = 1 / 100, rho / 100  # per ms
        assert theory["mean_ms"] == pytest.approx(1 / (mu - lam), rel=1e-12)
        assert theory["wait_probability"] == pytest.approx(rho, rel=1e-12)
        assert theory["p99_ms"] == pytest.approx(math.log(100) / (mu - lam), rel=1e-12)


def test_mg1_theory_is_pollaczek_khinchine(run: RunDemo) -> None:
    # E[S²] of a lognormal with mean m and shape σ is m²·exp(σ²); Wq = λE[S²] / (2(1 − ρ)).
    theory = run(
        "systems_capacity", service="lognormal", lognormal_sigma=0.8, utilisation=0.6, requests=1000
    ).theory
    second = 100.0**2 * math.exp(0.64)
    assert theory["wait_ms"] == pytest.approx(0.006 * second / (2 * 0.4), rel=1e-12)
    no_theory = run("systems_capacity", service="lognormal", servers=2, requests=1000).theory
    assert "mean_ms" not in no_theory and "littles_product" in no_theory


@pytest.mark.parametrize(
    ("params", "tolerance"),
    [
        ({"utilisation": 0.5}, 0.05),  # M/M/1: 200 ms
        ({"servers": 4, "utilisation": 0.7}, 0.05),  # M/M/4, Erlang C
        ({"service": "lognormal", "lognormal_sigma": 0.5, "utilisation": 0.5}, 0.05),  # M/G/1
    ],
)
def test_simulated_means_match_queueing_theory(
    run: RunDemo, params: dict[str, object], tolerance: float
) -> None:
    # 100,000 requests at moderate load: the mean of 3 seeds is within 5% of theory.
    results = [run("systems_capacity", **params, seed=s) for s in range(3)]
    for output in ("mean_ms", "in_system", "wait_probability"):
        measured = float(np.mean([r.outputs[output] for r in results]))
        assert measured == pytest.approx(results[0].theory[output], rel=tolerance)


def test_measured_littles_law_holds_for_any_service_distribution(run: RunDemo) -> None:
    # L (area under N(t)) and λW differ only by requests straddling the window's ends.
    for params in (
        {},
        {"service": "lognormal", "servers": 3},
        {"servers": 16, "utilisation": 0.95},
    ):
        out = run("systems_capacity", **params).outputs
        assert out["in_system"] == pytest.approx(out["littles_product"], rel=0.01)


def test_fanout_share_is_exactly_one_minus_099_to_the_n(run: RunDemo) -> None:
    for fanout in (1, 10, 100, 1000):
        result = run("systems_capacity", fanout=fanout, fanout_requests=1000, requests=1000)
        assert result.theory["slow_request_share"] == 1 - 0.99**fanout
        # A binomial test on 1000 requests; fails by chance with probability below 1e-4.
        hits = round(result.outputs["slow_request_share"] * 1000)
        assert binomtest(hits, 1000, 1 - 0.99**fanout).pvalue > 1e-4


@pytest.mark.parametrize(("fast", "slow", "share"), [(10.0, 200.0, 0.02), (5.0, 50.0, 0.1)])
def test_leaf_quantiles_against_scipy_lognormals(fast: float, slow: float, share: float) -> None:
    leaves = leaves_of(params_of(leaf_ms=fast, slow_ms=slow, slow_share=share))

    def cdf(t: float) -> float:
        return float(
            (1 - share) * lognorm.cdf(t, LEAF_SIGMA, scale=fast)
            + share * lognorm.cdf(t, LEAF_SIGMA, scale=slow)
        )

    for q in (0.5, 0.95, 0.99, 0.99 ** (1 / 100)):
        assert cdf(leaves.quantile(q)) == pytest.approx(q, abs=1e-10)
    # Hedged at h: a call is late only if it and its copy (sent at h) are both late.
    h = leaves.quantile(0.95)
    t = leaves.quantile(0.999, hedge_ms=h)
    assert (1 - cdf(t)) * (1 - cdf(t - h)) == pytest.approx(0.001, abs=1e-10)


def test_fanout_measurements_near_their_exact_quantiles(run: RunDemo) -> None:
    result = run("systems_capacity", fanout=10, requests=1000, fanout_requests=100_000)
    for output in ("leaf_p99_ms", "fanout_p50_ms", "fanout_p99_ms", "hedged_p99_ms"):
        assert result.outputs[output] == pytest.approx(result.theory[output], rel=0.03)
    # 1,000,000 first calls, each late with probability 0.05
    assert result.outputs["hedge_extra_load"] == pytest.approx(0.05, abs=0.001)


def test_same_seed_same_numbers_and_another_seed_differs(run: RunDemo) -> None:
    first = run("systems_capacity", servers=3, requests=5000, fanout_requests=2000, seed=7)
    again = run("systems_capacity", servers=3, requests=5000, fanout_requests=2000, seed=7)
    other = run("systems_capacity", servers=3, requests=5000, fanout_requests=2000, seed=8)
    assert first.outputs == again.outputs
    assert first.series == again.series
    assert first.outputs["mean_ms"] != other.outputs["mean_ms"]


def test_series(run: RunDemo) -> None:
    result = run("systems_capacity", requests=5000, fanout=50, fanout_requests=2000)
    series = {s.name: s for s in result.series}
    theory = series["mean time in system (theory)"]
    assert theory.x[-1] == 0.9 and theory.y[-1] == pytest.approx(1000.0)  # 100 ms / (1 − 0.9)
    assert (
        series["p99 time in system (simulated)"].y[-1]
        > series["mean time in system (simulated)"].y[-1]
    )
    fanout, exact = series["simulated"], series["1 − 0.99^N"]
    assert fanout.x[0] == 1.0 and fanout.x[-1] == 50.0
    assert fanout.y[-1] == result.outputs["slow_request_share"]
    assert exact.y == pytest.approx([1 - 0.99**n for n in fanout.x])
    assert fanout.y == sorted(fanout.y)  # more leaves can only add a slow one


RANKER = {"servers": 8, "service_ms": 40.0, "service": "lognormal", "lognormal_sigma": 0.5}
"""The heavy-ranker replica of the recommender card: 8 workers, 40 ms lognormal service."""


# Card claims. Over 30 seeds (12 for RANKER): see docs/demos.md for the spread at each setting.
@pytest.mark.parametrize(
    ("params", "output", "expected", "tolerance"),
    [
        ({}, "slow_request_share", 0.634, 0.03),
        ({}, "hedge_extra_load", 0.05, 0.003),
        ({}, "leaf_p99_ms", 200.0, 10.0),
        ({}, "fanout_p50_ms", 221.0, 6.6),
        ({"fanout": 10}, "hedged_p99_ms", 32.0, 1.9),
        ({"utilisation": 0.5}, "mean_ms", 200.0, 10.0),
        ({"utilisation": 0.5}, "p99_ms", 921.0, 74.0),
        (RANKER | {"utilisation": 0.5}, "mean_ms", 40.4, 0.8),
        (RANKER | {"utilisation": 0.9}, "mean_ms", 63.0, 5.0),
        (RANKER | {"utilisation": 0.9, "servers": 1}, "mean_ms", 271.0, 40.0),
    ],
)
def test_card_claims(
    run: RunDemo, params: dict[str, object], output: str, expected: float, tolerance: float
) -> None:
    outputs = run("systems_capacity", **params).outputs
    assert outputs[output] == pytest.approx(expected, abs=tolerance)


def test_bad_parameters_are_refused(client: TestClient) -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("systems_capacity").validate({"utilisation": 1.0})
    message = caught.value.problems[0].message
    assert message.startswith(
        "utilisation must be below 1, got 1.0: at ρ ≥ 1 the queue is unstable"
    )
    with pytest.raises(InvalidParams) as caught:
        get_demo("systems_capacity").validate({"fanout": 1000, "fanout_requests": 2000})
    assert caught.value.problems[0].message == (
        "fanout_requests × fanout must be at most 1,048,576, got 2000 × 1000: lower "
        "fanout_requests to 1048 or lower fanout"
    )
    for bad in (
        {"utilisation": 1.5},
        {"utilisation": 0.0},
        {"servers": 0},
        {"servers": 65},
        {"service": "weibull"},
        {"requests": 500},
        {"slow_share": 0.5},
        {"hedge_quantile": 1.0},
    ):
        response = client.post("/demos/systems_capacity", json=bad)
        assert response.status_code == 422
        assert response.json()["detail"][0]["param"] == next(iter(bad))
    response = client.post("/demos/systems_capacity", json={"utilisation": 1})
    assert response.status_code == 422
    assert "unstable" in response.json()["detail"][0]["message"]
    response = client.post("/demos/systems_capacity", json={"fanout": 500, "fanout_requests": 5000})
    assert response.status_code == 422
    assert response.json()["detail"][0]["param"] == "fanout_requests"

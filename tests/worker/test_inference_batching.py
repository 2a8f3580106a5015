"""batching against a token-by-token loop, hand-worked cases and closed forms.

References: Yu et al., Orca (OSDI 2022) §3 for request-level vs iteration-level
scheduling; Kwon et al., PagedAttention (arXiv:2309.06180) §3.1 and §4 for
max-length reservation, block-granular allocation and the under-one-block waste,
Table 1 for OPT-13B's 15.7K token slots of KV cache, §6.1 for Orca (Max), which
reserves 2,048 slots per request, and Fig. 13a for its 7.00 batched requests on
average (§6.2: vLLM batches 4.3x as many).

Closed forms. Full static batches of B exponential lengths run for μ·H_B steps
(the expected maximum), so the useful share of slot-steps tends to 1 / H_B. A
final length whose remainder mod b is uniform leaves (b − 1)/2 empty slots in
the last block on average (about b/2).
"""

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.demos.specs.inference_batching import BatchingParams
from app.worker.demos.inference_batching import (
    ceil_sum,
    continuous_batching,
    kv_slot_steps,
    static_batching,
    workload,
)
from tests.worker.conftest import RunDemo

# --- an independent reference: one token at a time -------------------------------------


def step_by_step(
    arrive: list[float], out: list[int], slots: int, continuous: bool
) -> tuple[list[float], int]:
    """Completion times and decode steps, advancing one decode step per loop."""
    done, running, t, i, steps = [0.0] * len(out), {}, 0.0, 0, 0
    while running or i < len(out):
        if not running:
            t = max(t, arrive[i])
        if continuous or not running:  # static: admit only into an empty engine
            while len(running) < slots and i < len(out) and arrive[i] <= t:
                running[i] = out[i]
                i += 1
        t += 1
        steps += 1
        for r in list(running):
            running[r] -= 1
            if continuous and running[r] == 0:
                done[r] = t
                del running[r]
        if not continuous and all(left <= 0 for left in running.values()):
            for r in running:
                done[r] = t
            running = {}
    return done, steps


def held_per_step(prompt: int, out: int, max_len: int, b: int) -> dict[str, int]:
    """Slot-steps of one request, one decode step at a time."""
    totals = {"stored": 0, "max": 0, "exact": 0, "paged": 0}
    for s in range(1, out + 1):
        cached = prompt + s
        totals["stored"] += cached
        totals["max"] += max_len
        totals["exact"] += prompt + out
        totals["paged"] += b * -(-cached // b)
    return totals


# --- scheduling ------------------------------------------------------------------------


def test_hand_worked_batch() -> None:
    # Two slots, lengths 5, 1, 2 queued at 0. Static: {5, 1} runs 5 steps, then {2}
    # runs 2: 7 steps, all three wait for their batch. Continuous: 1 leaves after
    # step 1, 2 takes its slot and ends at 3; 5 ends at 5.
    arrive, out = torch.zeros(3, dtype=torch.float64), torch.tensor([5, 1, 2])
    done, steps = static_batching(arrive, out, 2)
    assert (done.tolist(), steps) == ([5.0, 5.0, 7.0], 7)
    done, steps = continuous_batching(arrive, out, 2)
    assert (done.tolist(), steps) == ([5.0, 1.0, 3.0], 5)


def test_hand_worked_arrivals() -> None:
    # One slot. Request 0 (3 tokens) at 0; request 1 (2 tokens) arrives at 0.5 and
    # starts at the step boundary 3; request 2 arrives at 10.25 to an idle engine.
    arrive = torch.tensor([0.0, 0.5, 10.25], dtype=torch.float64)
    out = torch.tensor([3, 2, 1])
    for scheduler in (static_batching, continuous_batching):
        done, steps = scheduler(arrive, out, 1)
        assert (done.tolist(), steps) == ([3.0, 5.0, 11.25], 6)


@pytest.mark.parametrize("lengths", ["exponential", "uniform", "constant"])
@pytest.mark.parametrize(("slots", "load"), [(1, 0.0), (3, 0.0), (8, 0.0), (3, 0.5), (8, 0.9)])
def test_schedulers_match_a_token_by_token_loop(lengths: str, slots: int, load: float) -> None:
    params = BatchingParams(
        requests=200, slots=slots, output_lengths=lengths, output_mean=25, load=load, seed=3
    )
    _, out_np, arrive_np = workload(params)
    arrive, out = torch.from_numpy(arrive_np), torch.from_numpy(out_np)
    for scheduler, continuous in ((static_batching, False), (continuous_batching, True)):
        done, steps = scheduler(arrive, out, slots)
        ref_done, ref_steps = step_by_step(arrive_np.tolist(), out_np.tolist(), slots, continuous)
        assert steps == ref_steps
        assert done.tolist() == pytest.approx(ref_done, abs=1e-6)


def test_equal_lengths_waste_nothing(run: RunDemo) -> None:
    # 40 requests of 50 tokens in 8 slots: 5 full batches of 50 steps either way.
    out = run("batching", requests=40, slots=8, output_lengths="constant", output_mean=50).outputs
    assert out["static_steps"] == out["continuous_steps"] == 250
    assert out["static_utilisation"] == out["continuous_utilisation"] == 1
    assert out["static_tokens_per_step"] == 8
    assert out["static_mean_latency"] == out["continuous_mean_latency"] == 150  # (50+…+250)/5


@pytest.mark.parametrize("seed", range(5))
def test_static_share_is_one_over_harmonic(run: RunDemo, seed: int) -> None:
    # max_len 8192 keeps the exponential outputs (mean 200) uncapped. Over 30 seeds
    # the ratio to 1/H_8 had mean -0.01%, sd 1.7% and worst 3.6%: 6% is 3.5 sd.
    result = run("batching", output_mean=200, max_len=8192, seed=seed)
    h8 = sum(1 / k for k in range(1, 9))
    assert result.theory["static_utilisation"] == pytest.approx(1 / h8)
    assert result.outputs["static_utilisation"] == pytest.approx(1 / h8, rel=0.06)
    assert result.outputs["continuous_utilisation"] > 0.98  # only the final drain is idle


def test_continuous_wins_under_load(run: RunDemo) -> None:
    out = run("batching", output_mean=200, load=0.2).outputs
    assert out["latency_ratio"] > 2
    assert out["continuous_mean_latency"] == pytest.approx(out["mean_output"], rel=0.1)
    assert "static_utilisation" not in run("batching", load=0.2).theory


# --- KV-cache allocation ---------------------------------------------------------------


def test_ceil_sum_is_the_sum_of_ceilings() -> None:
    n = torch.arange(0, 200)
    for b in (1, 3, 16):
        expected = [sum(-(-t // b) for t in range(1, k + 1)) for k in range(200)]
        assert ceil_sum(n, b).tolist() == expected


def test_hand_worked_request() -> None:
    # Prompt 3, output 2, blocks of 4, max_len 16: the steps cache 4 and 5 tokens;
    # paged holds one block then two (4 + 8), the oracle 5 + 5, max-length 16 + 16.
    held = kv_slot_steps(torch.tensor([3]), torch.tensor([2]), 16, 4)
    assert held["stored"] == 9 and held["paged"] == 12
    assert held["exact"] == 10 and held["max"] == 32


def test_slot_steps_match_a_step_loop() -> None:
    params = BatchingParams(requests=100, output_mean=60, max_len=512, block_size=16, seed=5)
    prompt, out, _ = workload(params)
    held = kv_slot_steps(torch.from_numpy(prompt), torch.from_numpy(out), 512, 16)
    totals = [held_per_step(int(p), int(o), 512, 16) for p, o in zip(prompt, out, strict=True)]
    for name in ("stored", "max", "exact", "paged"):
        assert held[name] == sum(t[name] for t in totals), name


def test_paged_attention_card_workload(run: RunDemo) -> None:
    # The paged-attention card's numpy simulation, and Kwon et al.'s OPT-13B setting:
    # 15,728 slots / 2,048 reserved = 7 requests (Orca (Max) batched 7.00, Fig. 13).
    result = run("batching")
    out = result.outputs
    assert out["mean_prompt"] == pytest.approx(143, abs=0.5)
    assert out["mean_output"] == pytest.approx(308, abs=0.5)
    assert out["max_used"] == pytest.approx(0.219, abs=5e-4)
    assert out["exact_used"] == pytest.approx(0.594, abs=5e-4)
    assert out["paged_used"] == pytest.approx(0.984, abs=5e-4)
    assert (out["max_requests"], out["exact_requests"], out["paged_requests"]) == (7, 20, 34)
    assert result.theory["max_requests"] == 7
    assert out["max_used"] + out["max_reserved"] + out["max_internal"] == pytest.approx(1)
    assert out["paged_waste_max"] == 15


@pytest.mark.parametrize(("b", "tolerance"), [(4, 0.1), (64, 1.6)])
@pytest.mark.parametrize("seed", range(3))
def test_paged_waste_is_half_a_block(run: RunDemo, b: int, tolerance: float, seed: int) -> None:
    # Uniform outputs on 1…999 make the final length mod b nearly uniform. Over 30
    # seeds the gap to (b - 1)/2 had sd 0.026 (b = 4) and 0.40 (b = 64): the
    # tolerances are about 4 sd, and b = 4 tells (b - 1)/2 = 1.5 from b/2 = 2.
    result = run("batching", output_lengths="uniform", output_mean=500, block_size=b, seed=seed)
    assert result.theory["paged_waste_mean"] == (b - 1) / 2
    assert result.outputs["paged_waste_mean"] == pytest.approx((b - 1) / 2, abs=tolerance)
    assert result.outputs["paged_waste_max"] == b - 1


def test_one_token_blocks_waste_nothing(run: RunDemo) -> None:
    out = run("batching", block_size=1).outputs
    assert out["paged_used"] == 1 and out["paged_waste_mean"] == 0


def test_same_seed_same_workload() -> None:
    a = workload(BatchingParams(seed=7))
    b = workload(BatchingParams(seed=7))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"requests": 0}, "requests"),
        ({"requests": 5001}, "requests"),
        ({"slots": 513}, "slots"),
        ({"output_lengths": "normal"}, "output_lengths"),
        ({"output_mean": 4097}, "output_mean"),
        ({"max_len": 8193}, "max_len"),
        ({"load": 1.0}, "load"),
        ({"block_size": 257}, "block_size"),
        ({"kv_budget_tokens": 10}, "kv_budget_tokens"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/batching", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

"""pipeline_schedule: the simulated timelines against a hand-worked case, closed forms and PyTorch.

References: p = 2, m = 2 with t_b = 2 worked by hand below; Megatron-LM (Narayanan
et al. 2021, §2.2.1): idle time (p − 1)(t_f + t_b) per stage, so an iteration of
(m + p − 1)(t_f + t_b) and a bubble of (p − 1)/(m + p − 1) of it, (p − 1)/m of the
ideal time; GPipe stashes m micro-batches, 1F1B at most p. The order of each
stage's operations is checked against ``torch.distributed.pipelining``: the
order ``ScheduleGPipe._get_pipeline_order`` lists, and the loop of
``Schedule1F1B._step_microbatches`` transcribed.
"""

import itertools
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from app.worker.demos.distributed_pipeline import (
    Op,
    Schedule,
    bubble,
    makespan,
    peak_activations,
    simulate,
    stage_order,
)
from tests.worker.conftest import RunDemo

# p = 2, m = 2, forward 1, backward 2, by hand:
# GPipe: stage 0 runs F0 [0, 1), F1 [1, 2); stage 1 F0 [1, 2), F1 [2, 3), B0 [3, 5),
# B1 [5, 7); stage 0's B0 waits for stage 1's B0: [5, 7), then B1 [7, 9).
# 1F1B: stage 0 warms up with p − 1 = 1 forward, so F0, F1, B0, B1; stage 1 F0, B0, F1,
# B1: F0 [1, 2), B0 [2, 4), F1 [4, 5) (F1 from stage 0 arrived at 2), B1 [5, 7); stage 0
# B0 [4, 6), B1 [7, 9).
# Both take 9 = (m + p − 1) · 3; each stage is busy 6 of 9: bubble 1/3 = (p − 1)/(m + p − 1).
HAND_WORKED: dict[Schedule, set[Op]] = {
    "gpipe": {
        Op(0, "F", 0, 0, 1),
        Op(0, "F", 1, 1, 2),
        Op(1, "F", 0, 1, 2),
        Op(1, "F", 1, 2, 3),
        Op(1, "B", 0, 3, 5),
        Op(1, "B", 1, 5, 7),
        Op(0, "B", 0, 5, 7),
        Op(0, "B", 1, 7, 9),
    },
    "1f1b": {
        Op(0, "F", 0, 0, 1),
        Op(0, "F", 1, 1, 2),
        Op(1, "F", 0, 1, 2),
        Op(1, "B", 0, 2, 4),
        Op(0, "B", 0, 4, 6),
        Op(1, "F", 1, 4, 5),
        Op(1, "B", 1, 5, 7),
        Op(0, "B", 1, 7, 9),
    },
}


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_hand_worked_two_stages_two_microbatches(schedule: Schedule) -> None:
    timeline = simulate(2, 2, schedule, 2.0)
    assert set(timeline) == HAND_WORKED[schedule]
    assert makespan(timeline) == 9
    assert bubble(timeline, 2) == pytest.approx(1 / 3)
    assert peak_activations(timeline, 2) == ([2, 2] if schedule == "gpipe" else [2, 1])


def test_hand_worked_case_through_the_demo(run: RunDemo) -> None:
    result = run("pipeline_schedule", stages=2, microbatches=2)
    assert result.outputs["gpipe_time"] == result.outputs["one_f_one_b_time"] == 9
    assert result.outputs["gpipe_bubble"] == pytest.approx(1 / 3)
    assert result.outputs["gpipe_bubble_over_ideal"] == pytest.approx(1 / 2)
    assert result.outputs["one_f_one_b_peak_activations"] == 2
    assert result.notes[:2] == [
        "GPipe, stage 0: F0 F1 .. .. .. B0 B0 B1 B1",
        "GPipe, stage 1: .. F0 F1 B0 B0 B1 B1 .. ..",
    ]


CASES = [
    (p, m, ratio)
    for p, m in [(1, 1), (1, 5), (2, 1), (3, 2), (4, 4), (4, 8), (4, 16), (8, 3), (8, 64), (16, 7)]
    for ratio in (0.25, 1.0, 2.0, 3.5)
]


@pytest.mark.parametrize(("p", "m", "ratio"), CASES)
def test_closed_forms(p: int, m: int, ratio: float) -> None:
    for schedule in ("gpipe", "1f1b"):
        timeline = simulate(p, m, schedule, ratio)
        assert makespan(timeline) == pytest.approx((m + p - 1) * (1 + ratio))
        assert bubble(timeline, p) == pytest.approx((p - 1) / (m + p - 1))
        idle = p * makespan(timeline) - p * m * (1 + ratio)
        assert idle / (p * m * (1 + ratio)) == pytest.approx((p - 1) / m)
    assert peak_activations(simulate(p, m, "gpipe", ratio), p) == [m] * p
    # 1F1B: stage s stashes p − s micro-batches at most (m when there are fewer).
    assert peak_activations(simulate(p, m, "1f1b", ratio), p) == [min(p - s, m) for s in range(p)]


@pytest.mark.parametrize(("p", "m", "ratio"), CASES)
def test_timeline_respects_every_dependency(p: int, m: int, ratio: float) -> None:
    for schedule in ("gpipe", "1f1b"):
        timeline = simulate(p, m, schedule, ratio)
        end = {(op.kind, op.stage, op.microbatch): op.end for op in timeline}
        assert len(end) == len(timeline) == 2 * p * m
        for op in timeline:
            assert op.end - op.start == (1.0 if op.kind == "F" else ratio)
            if op.kind == "F" and op.stage > 0:
                assert op.start >= end[("F", op.stage - 1, op.microbatch)]
            if op.kind == "B":
                after = ("B", op.stage + 1) if op.stage < p - 1 else ("F", op.stage)
                assert op.start >= end[(*after, op.microbatch)]
        for stage in range(p):  # a stage runs one operation at a time, in schedule order
            mine = [op for op in timeline if op.stage == stage]
            assert [(op.kind, op.microbatch) for op in mine] == stage_order(p, m, schedule, stage)
            assert all(a.end <= b.start for a, b in itertools.pairwise(mine))


def torch_1f1b_order(p: int, m: int, stage: int) -> list[tuple[str, int]]:
    """The order ``Schedule1F1B._step_microbatches`` (torch 2.13) runs, its loop transcribed.

    min(m, p − stage) warm-up forwards, then backward-forward pairs ("1B1F")
    until the forwards run out, then the remaining backwards. (Its
    ``_get_pipeline_order``, a description for tools, starts the last stage's
    steady state at F1, so it is not the reference here.)
    """
    order = [("F", i) for i in range(min(m, p - stage))]
    forward, backward = len(order), 0
    while True:
        order.append(("B", backward))
        backward += 1
        if forward == m:
            break
        order.append(("F", forward))
        forward += 1
    return order + [("B", i) for i in range(backward, m)]


@pytest.mark.parametrize(("p", "m"), [(1, 3), (2, 2), (4, 8), (4, 4), (8, 16), (3, 5), (6, 2)])
def test_order_matches_pytorch_pipelining(p: int, m: int) -> None:
    for stage in range(p):
        assert stage_order(p, m, "1f1b", stage) == torch_1f1b_order(p, m, stage)
    schedules = pytest.importorskip("torch.distributed.pipelining.schedules")
    order_of = getattr(getattr(schedules, "ScheduleGPipe", None), "_get_pipeline_order", None)
    if order_of is None:
        pytest.skip("this torch has no ScheduleGPipe._get_pipeline_order")
    # The method reads only these two attributes: no stage or process group needed.
    torch_order = order_of(SimpleNamespace(_num_stages=p, _n_microbatches=m))
    for stage in range(p):
        actions = [
            ("F" if a.computation_type.name == "FORWARD" else "B", a.microbatch_index)
            for a in torch_order[stage]
            if a is not None and a.computation_type.name in ("FORWARD", "FULL_BACKWARD")
        ]
        assert actions == stage_order(p, m, "gpipe", stage), stage


def test_outputs_and_theory_agree_at_the_defaults(run: RunDemo) -> None:
    result = run("pipeline_schedule")  # p = 4, m = 8, t_b = 2: the card's example
    outputs, theory = result.outputs, result.theory
    for name, value in theory.items():
        assert outputs[name] == pytest.approx(value), name
    assert outputs["gpipe_bubble"] == pytest.approx(3 / 11)
    assert outputs["one_f_one_b_bubble_over_ideal"] == pytest.approx(3 / 8)
    assert outputs["gpipe_peak_activations"] == 8
    assert outputs["one_f_one_b_peak_activations"] == 4
    assert outputs["one_f_one_b_last_stage_peak"] == 1


def test_bubble_series_falls_with_m_and_matches_theory(run: RunDemo) -> None:
    series = {s.name: s for s in run("pipeline_schedule", stages=8).series}
    gpipe, one_f_one_b, theory = (
        series["GPipe (simulated)"],
        series["1F1B (simulated)"],
        series["(p−1)/(m+p−1)"],
    )
    assert gpipe.x == one_f_one_b.x == theory.x
    assert gpipe.y == pytest.approx(theory.y)
    assert one_f_one_b.y == pytest.approx(theory.y)
    assert all(a > b for a, b in itertools.pairwise(gpipe.y))


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"stages": 0}, "stages"),
        ({"microbatches": 257}, "microbatches"),
        ({"backward_ratio": 0}, "backward_ratio"),
    ],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/pipeline_schedule", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]

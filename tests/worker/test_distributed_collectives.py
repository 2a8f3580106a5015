"""collectives: gloo's collectives and a hand-written ring against a second implementation.

References: a ring all-reduce simulated here in NumPy, one buffer per rank in
one process (the algorithm of nccl-tests' doc/PERFORMANCE.md and of the ring
all-reduce card), counting the bytes each rank sends; the sum of the ranks'
buffers in NumPy; the unsplit MLP. The launcher is tested with ranks that
raise, exit or hang: each failure must raise at once (or at the deadline) and
leave no rank process behind.
"""

import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch.distributed as dist
from fastapi.testclient import TestClient

from app.demos.params import InvalidParams
from app.worker.demos import get_demo
from app.worker.demos._ranks import RanksFailed, run_ranks
from app.worker.demos.distributed_collectives import rank_buffer, ring_theory
from tests.worker.conftest import RunDemo


def numpy_ring(buffers: list[np.ndarray]) -> tuple[list[np.ndarray], list[int], list[int]]:
    """Ring all-reduce over in-process buffers: the results, and bytes sent per phase per rank."""
    n = len(buffers)
    chunks = [np.array_split(buffer.copy(), n) for buffer in buffers]
    sent = [[0] * n, [0] * n]
    for phase in (0, 1):
        for step in range(n - 1):
            messages = []
            for rank in range(n):
                index = (rank - step) % n if phase == 0 else (rank + 1 - step) % n
                messages.append((rank, index, chunks[rank][index].copy()))
            for rank, index, message in messages:
                sent[phase][rank] += message.nbytes
                target = chunks[(rank + 1) % n][index]
                if phase == 0:
                    target += message
                else:
                    target[:] = message
    return [np.concatenate(parts) for parts in chunks], sent[0], sent[1]


@pytest.mark.parametrize("ranks", [2, 3, 5, 8])
def test_ring_bytes_and_sums_match_a_numpy_ring(run: RunDemo, ranks: int) -> None:
    elements = 840  # divisible by every rank count up to 8
    outputs = run("collectives", ranks=ranks, elements=elements, hidden=8, tokens=2).outputs
    params = get_demo("collectives").validate({"ranks": ranks, "elements": elements})
    buffers = [rank_buffer(params, rank).numpy() for rank in range(ranks)]
    results, reduce_scatter, all_gather = numpy_ring(buffers)
    total = np.sum(buffers, axis=0)
    assert all(np.array_equal(result, total) for result in results)
    sent = [a + b for a, b in zip(reduce_scatter, all_gather, strict=True)]
    size = elements * 8
    assert outputs["buffer_bytes"] == size
    assert outputs["sent_bytes"] == max(sent) == ring_theory(ranks, size)
    assert outputs["received_bytes"] == max(sent)
    assert outputs["sent_spread"] == max(sent) - min(sent) == 0
    assert outputs["sent_over_buffer"] == pytest.approx(2 * (ranks - 1) / ranks)
    assert outputs["reduce_scatter_sent_over_buffer"] == max(reduce_scatter) / size
    assert outputs["reduce_scatter_sent_over_buffer"] == pytest.approx((ranks - 1) / ranks)
    assert outputs["ring_steps"] == 2 * (ranks - 1)
    # Whole numbers add exactly in any order: every method equals the NumPy sum.
    for name in (
        "allreduce_vs_rs_ag_mismatch",
        "allreduce_vs_local_mismatch",
        "ring_vs_allreduce_mismatch",
        "ring_vs_local_mismatch",
        "max_abs_error",
    ):
        assert outputs[name] == 0, name
    assert outputs["ranks_identical"] == 1


def test_float_sums_differ_only_by_rounding(run: RunDemo) -> None:
    result = run("collectives", ranks=4, elements=4096, values="normal", hidden=8, tokens=2)
    outputs = result.outputs
    # N(0, 1) sums of 4 terms are below ~10 in size: rounding is under 1e-14 in fp64.
    assert 0 < outputs["max_abs_error"] < 1e-13
    assert outputs["ranks_identical"] == 1  # every rank still ends with the same bits
    assert 0 < outputs["ring_vs_local_mismatch"] < 1
    assert "ring_vs_local_mismatch" not in result.theory
    assert any("order" in note for note in result.notes)


def test_float32_buffers(run: RunDemo) -> None:
    outputs = run("collectives", ranks=2, elements=1000, dtype="float32", hidden=8).outputs
    assert outputs["buffer_bytes"] == 4000
    assert outputs["sent_bytes"] == 4000  # 2(N − 1)/N = 1 at N = 2
    assert outputs["max_abs_error"] == 0


@pytest.mark.parametrize(("ranks", "hidden"), [(2, 4), (3, 16), (8, 64)])
def test_tensor_parallel_mlp_equals_the_unsplit_one(run: RunDemo, ranks: int, hidden: int) -> None:
    outputs = run("collectives", ranks=ranks, elements=8 * ranks, hidden=hidden, tokens=5).outputs
    assert outputs["mlp_max_abs_diff"] < 1e-12 * max(1.0, outputs["mlp_output_max_abs"])
    # GeLU of partial sums is not the GeLU of the sum: splitting A by rows is wrong.
    assert outputs["row_split_max_abs_diff"] > 0.05


def test_elements_must_be_a_multiple_of_ranks() -> None:
    with pytest.raises(InvalidParams) as caught:
        get_demo("collectives").validate({"ranks": 3, "elements": 1000})
    [problem] = caught.value.problems
    assert problem.param == "elements"
    assert problem.message == (
        "elements must be a multiple of ranks (3), got 1000: try 999 or 1,002"
    )
    get_demo("collectives").validate({"ranks": 7})  # the default, 8!, suits every rank count


@pytest.mark.parametrize(
    ("body", "param"),
    [({"ranks": 1}, "ranks"), ({"ranks": 9}, "ranks"), ({"elements": 65_544}, "elements")],
)
def test_bad_parameters_are_422(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/demos/collectives", json=body)
    assert response.status_code == 422
    assert [problem["param"] for problem in response.json()["detail"]] == [param]


def test_runs_from_the_workers_thread(client: TestClient) -> None:
    # The worker computes in a thread of its own process: the ranks start from there.
    response = client.post("/demos/collectives", json={"ranks": 2, "elements": 16, "hidden": 4})
    assert response.status_code == 200
    assert response.json()["outputs"]["sent_bytes"] == 128


# --- the launcher: failures kill every rank -----------------------------------------


def _note_pid(folder: str, rank: int) -> None:
    Path(folder, f"{rank}.pid").write_text(str(os.getpid()))


def _sum_of_ranks(rank: int, world: int, folder: str) -> int:
    import torch

    _note_pid(folder, rank)
    value = torch.tensor([rank])
    dist.all_reduce(value)
    return int(value.item())


def _raise_on_rank_1(rank: int, world: int, folder: str) -> None:
    _note_pid(folder, rank)
    if rank == 1:
        raise ValueError("injected fault")
    dist.barrier()  # the others wait for rank 1, which never comes


def _exit_on_rank_1(rank: int, world: int, folder: str) -> None:
    _note_pid(folder, rank)
    if rank == 1:
        os._exit(3)
    dist.barrier()


def _hang_on_rank_1(rank: int, world: int, folder: str) -> None:
    _note_pid(folder, rank)
    if rank == 1:
        time.sleep(600)
    dist.barrier()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _rank_pids(folder: Path, world: int) -> list[int]:
    deadline = time.monotonic() + 5
    while len(list(folder.glob("*.pid"))) < world and time.monotonic() < deadline:
        time.sleep(0.05)
    return [int(path.read_text()) for path in folder.glob("*.pid")]


def test_the_launcher_returns_every_ranks_result(tmp_path: Path) -> None:
    assert run_ranks(_sum_of_ranks, 3, str(tmp_path)) == [3, 3, 3]
    assert not any(_alive(pid) for pid in _rank_pids(tmp_path, 3))


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (_raise_on_rank_1, "rank 1 of 3 failed: ValueError: injected fault"),
        (_exit_on_rank_1, "rank 1 of 3 exited with code 3 without a result"),
        (_hang_on_rank_1, "the 3 ranks did not finish within 3 s"),
    ],
)
def test_a_failing_rank_leaves_no_process_behind(
    tmp_path: Path, target: object, message: str
) -> None:
    start = time.monotonic()
    with pytest.raises(RanksFailed, match=message):
        run_ranks(target, 3, str(tmp_path), timeout=3.0)  # type: ignore[arg-type]
    elapsed = time.monotonic() - start
    # A fault is reported as soon as it happens; a hang at the deadline, not later.
    assert elapsed < (3.0 + 5.0 if target is _hang_on_rank_1 else 3.0)
    pids = _rank_pids(tmp_path, 3)
    assert len(pids) == 3
    assert [pid for pid in pids if _alive(pid)] == []

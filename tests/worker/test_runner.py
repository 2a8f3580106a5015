"""Demos run in threads, at most ``max_concurrent`` at once, with a bounded queue."""

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
import torch

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec
from app.worker.demo import Demo, Outcome
from app.worker.runner import DemoRunner, WorkerBusy

T = TypeVar("T")


def run_in_fresh_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` in a thread of its own.

    Playwright's sync API leaves an event loop running in the main thread
    once a browser test has run, and asyncio.run refuses to nest in it.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class NoParams(DemoParams):
    pass


class Gate:
    """A demo compute function that blocks until released and counts who is inside."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0

    def __call__(self, params: NoParams, device: torch.device) -> Outcome:
        with self.lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        self.release.wait(timeout=5)
        with self.lock:
            self.inside -= 1
        return Outcome(outputs={"value": 1.0})


def gated_demo(gate: Gate) -> Demo[NoParams]:
    return Demo(
        spec=DemoSpec(
            name="gated",
            version=1,
            title="Gated",
            description="Blocks until released.",
            params=NoParams,
            outputs={"value": "Always 1."},
        ),
        compute=gate,
    )


async def settle() -> None:
    """Let queued tasks reach their await points."""
    for _ in range(20):
        await asyncio.sleep(0.01)


def test_at_most_max_concurrent_compute_at_once_and_the_rest_wait() -> None:
    gate = Gate()
    demo = gated_demo(gate)

    async def scenario() -> list[float]:
        runner = DemoRunner(torch.device("cpu"), max_concurrent=2, max_waiting=8)
        tasks = [asyncio.create_task(runner.run(demo, NoParams())) for _ in range(5)]
        await settle()
        assert gate.inside == 2
        gate.release.set()
        results = await asyncio.gather(*tasks)
        return [result.outputs["value"] for result in results]

    assert run_in_fresh_loop(scenario()) == [1.0] * 5
    assert gate.most_inside == 2


def test_a_full_queue_refuses_at_once() -> None:
    gate = Gate()
    demo = gated_demo(gate)

    async def scenario() -> None:
        runner = DemoRunner(torch.device("cpu"), max_concurrent=1, max_waiting=1)
        running = asyncio.create_task(runner.run(demo, NoParams()))
        waiting = asyncio.create_task(runner.run(demo, NoParams()))
        await settle()
        with pytest.raises(WorkerBusy, match=r"busy \(1 running, 1 waiting\)"):
            await runner.run(demo, NoParams())
        gate.release.set()
        await asyncio.gather(running, waiting)

    run_in_fresh_loop(scenario())


def test_a_cancelled_request_keeps_its_slot_until_the_thread_ends() -> None:
    gate = Gate()
    demo = gated_demo(gate)

    async def scenario() -> None:
        runner = DemoRunner(torch.device("cpu"), max_concurrent=1, max_waiting=4)
        abandoned = asyncio.create_task(runner.run(demo, NoParams()))
        await settle()
        abandoned.cancel()
        follower = asyncio.create_task(runner.run(demo, NoParams()))
        await settle()
        # The thread of the cancelled request still computes: nobody else may start.
        assert gate.inside == 1
        gate.release.set()
        await follower
        await runner.drain()

    run_in_fresh_loop(scenario())
    assert gate.most_inside == 1


def test_each_demo_computes_with_the_configured_torch_threads() -> None:
    seen: list[int] = []

    def record(params: NoParams, device: torch.device) -> Outcome:
        seen.append(torch.get_num_threads())
        return Outcome(outputs={"value": 1.0})

    demo = Demo(
        spec=DemoSpec(
            name="threads",
            version=1,
            title="Threads",
            description="Records torch's thread count.",
            params=NoParams,
            outputs={"value": "Always 1."},
        ),
        compute=record,
    )
    before = torch.get_num_threads()
    run_in_fresh_loop(DemoRunner(torch.device("cpu"), num_threads=1).run(demo, NoParams()))
    assert seen == [1]
    assert torch.get_num_threads() == before  # the caller's own thread is left alone


def test_warm_up_runs_each_demo_once_in_a_thread() -> None:
    callers: list[str] = []

    def record(params: NoParams, device: torch.device) -> Outcome:
        callers.append(threading.current_thread().name)
        return Outcome(outputs={"value": 1.0})

    demos = [
        Demo(
            spec=DemoSpec(
                name=f"demo_{index}",
                version=1,
                title="Demo",
                description="Records its thread.",
                params=NoParams,
                outputs={"value": "Always 1."},
            ),
            compute=record,
        )
        for index in range(3)
    ]
    run_in_fresh_loop(DemoRunner(torch.device("cpu")).warm_up(demos))
    assert len(callers) == 3
    assert threading.current_thread().name not in callers


def test_limits_must_make_sense() -> None:
    with pytest.raises(ValueError, match="max_concurrent and num_threads must be at least 1"):
        DemoRunner(torch.device("cpu"), max_concurrent=0)

"""Running demos off the event loop, a bounded number at a time.

A demo is seconds of CPU work in torch. Run inside ``async def`` it would stall
every other request, so it goes to a thread. Running many at once does not
finish them sooner, since they share the same cores, so at most
``max_concurrent`` run together; up to ``max_waiting`` more queue for a slot,
and beyond that the worker answers 503 at once instead of piling up requests
that the web server will have given up on.
"""

import asyncio
from collections.abc import Iterable
from typing import Any

import torch

from app.demos.params import DemoParams
from app.worker.demo import Demo, DemoResult


class WorkerBusy(Exception):
    """Every slot is taken and the queue is full: try again shortly."""


class DemoRunner:
    """Runs demos in worker threads with bounded concurrency.

    Args:
        device: where every demo's tensors go.
        max_concurrent: demos computing at the same time.
        max_waiting: requests allowed to wait for a slot; more get
            :class:`WorkerBusy`.
        num_threads: torch intra-op threads for each demo. One by default:
            with more, torch's OpenMP threads spin-wait for cores that other
            processes hold. Measured on 2 cores at a load average near 4, the
            rope demo took 11 s (p50) with 2 threads and 1.8 s with 1, and
            score_variance 670 ms against 114 ms. Raise it on a machine that
            runs nothing but the worker.
    """

    def __init__(
        self,
        device: torch.device,
        *,
        max_concurrent: int = 1,
        max_waiting: int = 16,
        num_threads: int = 1,
    ) -> None:
        if max_concurrent < 1 or max_waiting < 0 or num_threads < 1:
            raise ValueError(
                "max_concurrent and num_threads must be at least 1 and max_waiting at least 0, "
                f"got {max_concurrent}, {num_threads} and {max_waiting}"
            )
        self.device = device
        self.max_concurrent = max_concurrent
        self.max_waiting = max_waiting
        self.num_threads = num_threads
        self._slots = asyncio.Semaphore(max_concurrent)
        self._waiting = 0
        self._running: set[asyncio.Task[DemoResult]] = set()

    async def run(self, demo: Demo[Any], params: DemoParams) -> DemoResult:
        """Compute ``demo`` in a thread once a slot is free.

        Raises:
            WorkerBusy: ``max_waiting`` requests are already queued.
        """
        if self._slots.locked():
            if self._waiting >= self.max_waiting:
                raise WorkerBusy(
                    f"the worker is busy ({self.max_concurrent} running, {self._waiting} "
                    "waiting): try again in a moment"
                )
            self._waiting += 1
            try:
                await self._slots.acquire()
            finally:
                self._waiting -= 1
        else:
            await self._slots.acquire()
        task = asyncio.create_task(asyncio.to_thread(self._compute, demo, params))
        self._running.add(task)
        task.add_done_callback(self._finished)
        # A client that goes away cancels this coroutine but cannot stop the
        # thread: shield the task so its slot stays taken until it really ends.
        return await asyncio.shield(task)

    def _compute(self, demo: Demo[Any], params: DemoParams) -> DemoResult:
        # torch's intra-op thread count (OpenMP's) belongs to the calling
        # thread, so it is set here, in the worker thread, not at start-up.
        if torch.get_num_threads() != self.num_threads:
            torch.set_num_threads(self.num_threads)
        return demo.run(params, self.device)

    async def warm_up(self, demos: Iterable[Demo[Any]]) -> None:
        """Run each demo once at its smallest parameters, in a worker thread.

        The first call of a torch kernel family pays a one-time set-up (MKL,
        OpenMP teams): measured up to several seconds on a busy 2-core machine.
        Paying it at start-up keeps it out of the first learner's request.
        """

        def run_all() -> None:
            for demo in demos:
                self._compute(demo, demo.smallest())

        await asyncio.to_thread(run_all)

    async def drain(self) -> None:
        """Wait for the demos still computing (at shutdown)."""
        if self._running:
            await asyncio.wait(self._running)

    def _finished(self, task: "asyncio.Task[DemoResult]") -> None:
        self._running.discard(task)
        self._slots.release()
        if not task.cancelled():
            task.exception()  # retrieved here when the request that wanted it was cancelled

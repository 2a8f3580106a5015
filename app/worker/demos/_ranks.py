"""Run a function on N ranks of a ``torch.distributed`` gloo group, one CPU process each.

The demo worker computes a demo in a thread; a distributed demo needs real
processes, so :func:`run_ranks` starts ``world`` of them, waits for each one's
result with a hard deadline, and kills every one still running when the
deadline passes or any rank fails, before it raises :class:`RanksFailed`.

Start-up: a fresh Python process that imports torch costs about 1.3 s of CPU
and 146 MB of private memory (measured on the 2-core VM), so spawning N of them per request
would cost N times that. The ranks are therefore forked from
multiprocessing's *fork server*: one process, started by the first run (the
worker's warm-up), that imports torch and the demos once and then forks a
child per rank in milliseconds. The fork server is single-threaded, so forking
it is safe where forking the worker (threads, an event loop) would not be; it
stays up, holding about 200 MB of private memory, until the worker exits. Where there is no fork
server (Windows), the ranks are spawned instead.

Rendezvous: the parent hosts the ``TCPStore`` on 127.0.0.1 at a port the OS
picks (port 0), so concurrent runs never collide on a port; gloo's own
connections use the loopback interface (``GLOO_SOCKET_IFNAME``). Each rank's
store client and process group time out ``ORPHAN_GRACE_S`` after the run's
deadline, so a rank whose parent vanished still exits on its own.
"""

import multiprocessing
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

import torch
import torch.distributed as dist

A = TypeVar("A")
R = TypeVar("R")

TIMEOUT_S = 20.0
"""Deadline for one run, from the first rank's start to the last rank's answer."""
STARTUP_TIMEOUT_S = 180.0
"""Deadline for the fork server's first start (importing torch and the demos, once)."""
ORPHAN_GRACE_S = 10.0
"""A rank's own store and group time out this much after the run's deadline: the parent
decides that a run failed; a rank's timeouts only end it when its parent is gone."""
FAILURE_GRACE_S = 0.5
"""After a rank fails, how long the others may take to report (to tell cause from effect)."""
EXIT_GRACE_S = 2.0
"""After every rank answered, how long they may take to leave the group and exit."""
HOST = "127.0.0.1"

_server_lock = threading.Lock()
_server_ready = False


class RanksFailed(RuntimeError):
    """A rank raised, exited without a result, or the ranks ran past the deadline.

    Every rank process has been killed and reaped by the time this is raised.
    """


def run_ranks(
    target: Callable[[int, int, A], R], world: int, arg: A, *, timeout: float = TIMEOUT_S
) -> list[R]:
    """``[target(rank, world, arg) for rank in range(world)]``, each rank in its own process.

    ``target`` runs inside an initialised gloo process group of ``world``
    ranks (``dist.get_rank()`` is its ``rank``); it must be a module-level
    function, and ``arg`` and its results picklable.

    Raises:
        RanksFailed: a rank raised (its traceback's last line is in the
            message), died, or not every rank answered within ``timeout``
            seconds. No rank process is left running.
    """
    context = _context()
    store = dist.TCPStore(  # type: ignore[attr-defined]
        HOST,
        0,
        world,
        is_master=True,
        wait_for_workers=False,
        timeout=timedelta(seconds=timeout),
    )
    processes: list[Any] = []
    pipes: list[Connection] = []
    results: list[R] | None = None
    try:
        for rank in range(world):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(
                target=_rank_main,
                args=(target, rank, world, store.port, timeout + ORPHAN_GRACE_S, arg, sender),
                name=f"rank-{rank}",
                daemon=True,
            )
            process.start()
            sender.close()
            processes.append(process)
            pipes.append(receiver)
        results = _collect(processes, pipes, timeout)
        return results
    finally:
        _stop(processes, pipes, grace=EXIT_GRACE_S if results is not None else 0.0)
        del store


def _context() -> Any:
    """The fork server context (started once, with torch and the demos imported), else spawn."""
    global _server_ready
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    with _server_lock:
        if not _server_ready:
            # "__main__": the server runs the main script once (as multiprocessing's
            # spawn does in every child), so the ranks need not re-run it each.
            context.set_forkserver_preload(["__main__", "app.worker.demos"])
            # The first child waits for the server's imports: bound that wait on its
            # own, so the run's deadline measures the run.
            probe = context.Process(target=_nothing, daemon=True)
            probe.start()
            probe.join(STARTUP_TIMEOUT_S)
            code = probe.exitcode
            if code != 0:
                probe.kill()
                probe.join()
                raise RanksFailed(f"the fork server for the ranks did not start {_why(code)}")
            _server_ready = True
    return context


def _why(exitcode: int | None) -> str:
    """Why the fork server's first child failed, from its exit code."""
    if exitcode is None:
        return f"within {STARTUP_TIMEOUT_S:.0f} s"
    if exitcode < 0:
        return f"(its first child was killed by signal {-exitcode})"
    return (
        f"(exit code {exitcode}): a script that runs this demo must keep its own work under "
        "`if __name__ == '__main__':`, as multiprocessing requires"
    )


def _nothing() -> None:
    """A process that only proves the fork server answers."""


@dataclass(frozen=True)
class _Failure:
    """Why a rank gave no result; ``at`` is ``time.monotonic()`` (system-wide on Linux)."""

    rank: int
    message: str
    at: float
    died: bool


def _collect(processes: list[Any], pipes: list[Connection], timeout: float) -> list[Any]:
    """Each rank's result, in rank order; raise when one fails or time runs out.

    One failing rank makes the others fail too (gloo reports the connection
    it lost), so after the first failure the others get FAILURE_GRACE_S to
    report theirs, and the cause is told: a rank that died without a word,
    else the earliest error.
    """
    results: dict[int, Any] = {}
    failures: list[_Failure] = []
    waiting = {pipe: rank for rank, pipe in enumerate(pipes)}
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        sentinels = [processes[rank].sentinel for rank in waiting.values()]
        ready = wait([*waiting, *sentinels], timeout=max(0.0, deadline - time.monotonic()))
        for pipe in [
            pipe
            for pipe in waiting
            if pipe in ready or processes[waiting[pipe]].exitcode is not None
        ]:
            rank = waiting.pop(pipe)
            answer = _answer(pipe, rank, processes[rank])
            if isinstance(answer, _Failure):
                failures.append(answer)
                deadline = min(deadline, time.monotonic() + FAILURE_GRACE_S)
            else:
                results[rank] = answer
    if failures:
        raise RanksFailed(_cause(failures, len(processes)))
    if waiting:
        late = ", ".join(str(rank) for rank in sorted(waiting.values()))
        raise RanksFailed(
            f"the {len(processes)} ranks did not finish within {timeout:g} s "
            f"(rank {late} had not answered): every rank was killed"
        )
    return [results[rank] for rank in range(len(processes))]


def _answer(pipe: Connection, rank: int, process: Any) -> Any:
    """What rank ``rank`` sent, or a :class:`_Failure` saying why it sent nothing."""
    try:
        message = pipe.recv() if pipe.poll() else None
    except (EOFError, OSError):
        message = None
    if message is not None and message[0] == "ok":
        return message[1]
    if message is not None:
        return _Failure(rank, f"failed: {message[1]}", message[2], died=False)
    process.join(1.0)
    return _Failure(
        rank, f"exited with code {process.exitcode} without a result", time.monotonic(), died=True
    )


def _cause(failures: list[_Failure], world: int) -> str:
    """The failure to report: a rank that died, else the earliest error; the rest counted."""
    cause = min(failures, key=lambda failure: (not failure.died, failure.at))
    others = len(failures) - 1
    return f"rank {cause.rank} of {world} {cause.message}" + (
        f" ({others} other rank{'s' if others > 1 else ''} failed after it)" if others else ""
    )


def _stop(processes: list[Any], pipes: list[Connection], grace: float) -> None:
    """Give the ranks ``grace`` seconds to exit, kill the rest, reap them all; close the pipes."""
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
    for process in processes:
        process.join(5.0)
        if process.exitcode is not None:
            process.close()
    for pipe in pipes:
        pipe.close()


def _loopback() -> str | None:
    """The loopback interface's name (``lo`` on Linux), for gloo's connections."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    return next((name for name in names if name.startswith("lo")), None)


def _rank_main(
    target: Callable[[int, int, Any], Any],
    rank: int,
    world: int,
    port: int,
    timeout: float,
    arg: Any,
    sender: Connection,
) -> None:
    """In a rank's process: join the group, run ``target``, send back its result or error."""
    torch.set_num_threads(1)
    loopback = _loopback()
    if loopback is not None:
        os.environ["GLOO_SOCKET_IFNAME"] = loopback
    joined = False
    try:
        store = dist.TCPStore(  # type: ignore[attr-defined]
            HOST, port, world, is_master=False, timeout=timedelta(seconds=timeout)
        )
        dist.init_process_group(
            "gloo", store=store, rank=rank, world_size=world, timeout=timedelta(seconds=timeout)
        )
        joined = True
        message: tuple[Any, ...] = ("ok", target(rank, world, arg))
    except BaseException as error:  # reported to the parent, whatever it is
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        message = ("error", last, time.monotonic())
    try:
        # Before leaving the group: the other ranks' errors follow from this one.
        sender.send(message)
    finally:
        sender.close()
        if joined:
            dist.destroy_process_group()

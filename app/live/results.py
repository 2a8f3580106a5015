"""Live numbers: run demos through the worker, cache the results, judge each claim.

A result is cached under its demo, demo version and every parameter (seed
included), so a card's numbers come from the cache after their first run.
Cached results are kept in memory for the page's hot path and, when a
:class:`ResultStore` is given, in the database so they survive restarts and
are shared between web replicas.
"""

import asyncio
import logging
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Protocol

from cachetools import LRUCache

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.card import Card, Problem
from app.demos import DemoSpec, Scalar, demo_spec
from app.live.client import WorkerClient, WorkerError, WorkerRejected, WorkerUnavailable

logger = logging.getLogger(__name__)

Status = Literal["checked", "differs", "pending", "unavailable"]
MEMORY_ENTRIES = 4096
FAILURE_ENTRIES = 1024  # reasons kept for polling fragments; a bound, not a log


@dataclass(frozen=True)
class Measurement:
    """How one live number stands: its badge, and the measured value when there is one."""

    status: Status
    measured: float | None = None
    message: str = ""

    @property
    def label(self) -> str:
        return {
            "checked": "checked",
            "differs": "differs",
            "pending": "not yet run",
            "unavailable": "live check unavailable",
        }[self.status]


class ResultStore(Protocol):
    """Durable results by cache key (the database); called from a thread."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, demo: str, version: int, result: dict[str, Any]) -> None: ...


def judge(binding: LiveBinding, result: dict[str, Any]) -> Measurement:
    value = result.get("outputs", {}).get(binding.output)
    if not isinstance(value, int | float) or not math.isfinite(value):
        return Measurement("unavailable", None, f"the demo reported no '{binding.output}'")
    measured = float(value)
    if binding.agrees(measured):
        return Measurement("checked", measured)
    return Measurement(
        "differs",
        measured,
        f"claimed {binding.claim_text}, measured {measured:.6g} "
        f"(tolerance {binding.tolerance_text})",
    )


@lru_cache(maxsize=8192)
def _resolve(
    demo: str, params: tuple[tuple[str, Scalar], ...]
) -> tuple[DemoSpec[Any], dict[str, Scalar], str]:
    # Memoised: a card page resolves every live number on every request.
    spec = demo_spec(demo)
    full = spec.resolve(dict(params))
    return spec, full, spec.cache_key(full)


@lru_cache(maxsize=4096)
def _card_keys(card: Card) -> tuple[str, ...]:
    # Cards are immutable and hashed by identity: a reloaded card is a new object.
    slots: list[LiveBinding | EmbeddedDemo] = [*card.bindings, *card.demos]
    return tuple(_resolve(s.demo, tuple(sorted(s.params.items())))[2] for s in slots)


class LiveResults:
    """Results of demo runs: memory, then the store, then the worker."""

    def __init__(self, client: WorkerClient | None, store: ResultStore | None = None) -> None:
        self.client = client
        self.store = store
        self._memory: LRUCache[str, dict[str, Any]] = LRUCache(maxsize=MEMORY_ENTRIES)
        self._running: dict[str, asyncio.Task[dict[str, Any]]] = {}
        # Why the last background run of a key failed, until it is read once, so
        # a polling status fragment stops and says so instead of spinning.
        self._failed: LRUCache[str, str] = LRUCache(maxsize=FAILURE_ENTRIES)
        # The event loop keeps only weak references to tasks: hold background
        # runs here until they finish, or one could vanish mid-flight.
        self._background: set[asyncio.Task[dict[str, Any]]] = set()

    @staticmethod
    def resolve(
        demo: str, params: dict[str, Scalar]
    ) -> tuple[DemoSpec[Any], dict[str, Scalar], str]:
        """The demo's spec, its full parameters, and their cache key.

        Raises:
            ValueError: unknown demo or parameter, or a value out of bounds.
        """
        spec, full, key = _resolve(demo, tuple(sorted(params.items())))
        return spec, dict(full), key

    def signature(self, card: Card) -> tuple[bool, ...]:
        """Which of a card's live numbers and demos have results in memory.

        A rendered card page depends on the card and on this, so it can be
        cached until a result arrives.
        """
        return tuple(key in self._memory for key in _card_keys(card))

    def forget(self) -> None:
        """Drop the results held in memory (the store keeps its copies)."""
        self._memory.clear()

    def cached(self, key: str) -> dict[str, Any] | None:
        """A result already in memory; never blocks."""
        return self._memory.get(key)

    def _remember(self, key: str, result: dict[str, Any]) -> None:
        self._memory[key] = result

    async def result(
        self, demo: str, params: dict[str, Scalar], *, persist: bool = True
    ) -> dict[str, Any]:
        """The result of a demo run, computing it at most once per key at a time.

        Raises:
            ValueError: bad demo or parameters (checked before the worker is asked).
            WorkerError: the worker is unavailable or rejected the request.
        """
        spec, full, key = self.resolve(demo, params)
        found = self.cached(key)
        if found is not None:
            return found
        task = self._running.get(key)
        if task is None:
            task = asyncio.create_task(self._fetch(spec, full, key, persist))
            self._running[key] = task
            task.add_done_callback(lambda _t: self._running.pop(key, None))
        # shield: a client that disconnects must not cancel a run others wait on.
        return await asyncio.shield(task)

    def running(self, demo: str, params: dict[str, Scalar]) -> bool:
        _spec, _full, key = self.resolve(demo, params)
        return key in self._running

    def start(self, demo: str, params: dict[str, Scalar]) -> None:
        """Begin a run in the background (the status fragment polls for it)."""
        _spec, full, key = self.resolve(demo, params)
        if key in self._memory or key in self._running:
            return
        self._failed.pop(key, None)
        # Parameters a learner picks are not written to the database: anyone can
        # ask for any number of them, and the table would grow without bound.
        task = asyncio.create_task(self.result(demo, full, persist=False))

        def done(task: "asyncio.Task[dict[str, Any]]") -> None:
            # The result is read through the cache; a failure is kept for the poller.
            if not task.cancelled() and task.exception() is not None:
                self._failed[key] = str(task.exception())
                logger.warning("demo run failed: %s", task.exception())

        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(done)

    def take_failure(self, demo: str, params: dict[str, Scalar]) -> str | None:
        """Why the last background run of these parameters failed, once."""
        _spec, _full, key = self.resolve(demo, params)
        return self._failed.pop(key, None)

    async def _fetch(
        self, spec: DemoSpec[Any], params: dict[str, Scalar], key: str, persist: bool
    ) -> dict[str, Any]:
        if self.store is not None:
            stored = await asyncio.to_thread(self.store.get, key)
            if stored is not None:
                self._remember(key, stored)
                return stored
        if self.client is None:
            raise WorkerUnavailable("no demo worker is configured")
        result = await self.client.run(spec.name, params)
        if result.get("version") != spec.version:
            # A worker of another version computes other numbers: do not cache them
            # under this version's key.
            raise WorkerUnavailable(
                f"the worker runs {spec.name} version {result.get('version')}, "
                f"this server expects {spec.version}"
            )
        self._remember(key, result)
        if persist and self.store is not None:
            await asyncio.to_thread(self.store.put, key, spec.name, spec.version, result)
        return result

    def measurements(self, card: Card) -> dict[int, Measurement]:
        """Badges for a card's live numbers from memory only: the page's hot path."""
        found: dict[int, Measurement] = {}
        for binding in card.bindings:
            _spec, _full, key = self.resolve(binding.demo, binding.params)
            result = self.cached(key)
            found[binding.index] = judge(binding, result) if result else Measurement("pending")
        return found

    async def check(self, card: Card) -> dict[int, Measurement]:
        """Badges for every live number of a card, running what is not cached."""

        async def one(binding: LiveBinding) -> Measurement:
            try:
                return judge(binding, await self.result(binding.demo, binding.params))
            except WorkerRejected as exc:
                return Measurement("unavailable", None, f"the worker refused the request: {exc}")
            except (WorkerError, ValueError) as exc:
                return Measurement("unavailable", None, str(exc))

        measured = await asyncio.gather(*(one(b) for b in card.bindings))
        return {b.index: m for b, m in zip(card.bindings, measured, strict=True)}


@dataclass(frozen=True)
class DemoView:
    """What the page needs to draw one embedded demo: controls, values, any result."""

    spec: DemoSpec[Any]
    params: dict[str, Scalar]
    result: dict[str, Any] | None
    slot: str  # unique on the page: ids of the result box and charts

    @property
    def series(self) -> list[dict[str, Any]]:
        """The chart data as the worker sent it (templates/_demo_charts.html draws it)."""
        series: list[dict[str, Any]] = (self.result or {}).get("series", [])
        return series


def demo_view(results: LiveResults, demo: str, params: dict[str, Scalar], slot: str) -> DemoView:
    """The view of one demo; raises ValueError for a bad demo or parameters."""
    spec, full, key = results.resolve(demo, params)
    return DemoView(spec, full, results.cached(key), slot)


def demo_views(results: LiveResults, card: Card) -> dict[int, DemoView]:
    return {
        embedded.index: demo_view(
            results, embedded.demo, embedded.params, f"demo-{card.id}-{embedded.index}"
        )
        for embedded in card.demos
    }


async def verify_cards(cards: list[Card], client: WorkerClient) -> list[Problem]:
    """Run every live number of the cards and report each that disagrees or cannot run."""
    live = LiveResults(client)
    problems: list[Problem] = []
    checked = await asyncio.gather(*(live.check(card) for card in cards))
    for card, measurements in zip(cards, checked, strict=True):
        for binding in card.bindings:
            m = measurements[binding.index]
            if m.status == "differs":
                problems.append(Problem(card.path, binding.line, m.message))
            elif m.status != "checked":
                problems.append(
                    Problem(card.path, binding.line, f"live check unavailable: {m.message}")
                )
    return sorted(problems)

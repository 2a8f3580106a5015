"""Argon2id password hashes, and a bound on how many are computed at once.

Each Argon2 check holds :data:`MEMORY_KIB` of memory for as long as it runs.
Unbounded, a burst of sign-ins multiplies that: 40 at once with argon2-cffi's
defaults (64 MiB each) took a web process from 147 MB to over 1 GB. So:

- the parameters are OWASP's first choice for Argon2id (19 MiB, 2 passes,
  1 lane): about 16 ms of one core each (docs/security.md gives the figures);
- at most :data:`MAX_CONCURRENT` checks run at once in a process
  (:func:`gated`); others wait their turn on the event loop, which costs no
  thread and next to no memory, for up to :data:`WAIT_SECONDS`;
- a request that would wait longer, or find :data:`MAX_WAITING` already
  waiting, is refused with :class:`Busy` (503 and ``Retry-After``).

Peak memory for hashing is then ``MAX_CONCURRENT * MEMORY_KIB``: 38 MiB,
whatever the burst. A hash made with other parameters (older installs) still
verifies, at its own cost, and is replaced at that user's next sign-in.
"""

from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MEMORY_KIB = 19_456  # 19 MiB
TIME_COST = 2
PARALLELISM = 1
MAX_CONCURRENT = 2  # checks at once per process: 38 MiB at most
MAX_WAITING = 64  # requests queued for a check before the next is refused at once
WAIT_SECONDS = 10.0
RETRY_AFTER_SECONDS = 2

_hasher = PasswordHasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=PARALLELISM)
# One semaphore per event loop: a web process runs one, so the bound is per process.
_SLOTS: RunVar[anyio.Semaphore] = RunVar("quizlab_password_slots")

Result = TypeVar("Result")


class Busy(Exception):
    """Too many password checks are waiting: try again in :data:`RETRY_AFTER_SECONDS`."""

    def __init__(self) -> None:
        super().__init__(
            "Many people are signing in at this moment: "
            f"try again in {RETRY_AFTER_SECONDS} seconds."
        )
        self.retry_after = RETRY_AFTER_SECONDS


@cache
def _common() -> frozenset[str]:
    text = resources.files("app.accounts").joinpath("common_passwords.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def is_common(password: str) -> bool:
    """Whether ``password`` (in any case) is among the most common ones (ASVS 2.1.7)."""
    return password.lower() in _common()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify(stored: str, password: str) -> bool:
    """Whether ``password`` matches the Argon2 hash ``stored``; False for a malformed hash."""
    try:
        return _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """Whether ``stored`` was made with other parameters than today's."""
    return _hasher.check_needs_rehash(stored)


def _slots() -> anyio.Semaphore:
    try:
        return _SLOTS.get()
    except LookupError:
        slots = anyio.Semaphore(MAX_CONCURRENT)
        _SLOTS.set(slots)
        return slots


async def gated(work: Callable[[], Result]) -> Result:
    """Run ``work`` (which hashes or checks a password) in a thread, once a slot is free.

    Raises :class:`Busy` at once when :data:`MAX_WAITING` requests already
    wait, or after :data:`WAIT_SECONDS` without a slot.
    """
    slots = _slots()
    if slots.statistics().tasks_waiting >= MAX_WAITING:
        raise Busy
    acquired = False
    with anyio.move_on_after(WAIT_SECONDS):
        await slots.acquire()
        acquired = True
    if not acquired:
        raise Busy
    try:
        return await anyio.to_thread.run_sync(work)
    finally:
        slots.release()

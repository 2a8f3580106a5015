"""Rendered pages kept in memory, keyed on everything they depend on.

A card page depends only on the card (its content hash), the view, the
card file's problems and which live results are in memory, so its HTML can be
reused until one of those changes. That keeps the page close to the speed of
serving a precomputed string (see docs/performance.md).
"""

from collections.abc import Hashable
from threading import Lock

from cachetools import LRUCache

ENTRIES = 2048


class PageCache:
    """A small LRU of rendered bodies; safe to share between threads.

    cachetools' LRUCache is not thread-safe by itself: a lock guards it.
    """

    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._pages: LRUCache[Hashable, bytes] = LRUCache(maxsize=entries)
        self._lock = Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            return self._pages.get(key)

    def put(self, key: Hashable, body: bytes) -> None:
        with self._lock:
            self._pages[key] = body

"""Rendered pages kept in memory, keyed on everything they depend on.

A card page depends only on the card (its content hash), the view, the
card file's problems and which live results are in memory, so its HTML can be
reused until one of those changes. That keeps the page close to the speed of
serving a precomputed string (see docs/performance.md).
"""

from collections import OrderedDict
from collections.abc import Hashable
from threading import Lock

ENTRIES = 2048


class PageCache:
    """A small LRU of rendered bodies; safe to share between threads."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._pages: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            body = self._pages.get(key)
            if body is not None:
                self._pages.move_to_end(key)
            return body

    def put(self, key: Hashable, body: bytes) -> None:
        with self._lock:
            self._pages[key] = body
            self._pages.move_to_end(key)
            while len(self._pages) > self.entries:
                self._pages.popitem(last=False)

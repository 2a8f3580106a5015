"""Failed sign-ins counted per account and per client address, in memory.

After :data:`ACCOUNT_LIMIT` failures for one name, or :data:`ADDRESS_LIMIT`
from one address, within :data:`WINDOW` seconds, further attempts are refused
(429) without checking the password, until the oldest failure leaves the
window. Unknown names count like real ones, so the limit tells nothing about
which names exist. A success clears the name's count.

The counts live in the process: each replica counts on its own, and a restart
forgets them (docs/security.md).
"""

import time
from collections import deque
from threading import Lock

WINDOW = 15 * 60.0
ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20
MAX_KEYS = 100_000


class LoginLimiter:
    def __init__(
        self,
        *,
        window: float = WINDOW,
        account_limit: int = ACCOUNT_LIMIT,
        address_limit: int = ADDRESS_LIMIT,
    ) -> None:
        self.window = window
        self.limits = {"account": account_limit, "address": address_limit}
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        failures = self._failures.get(key)
        if failures is None:
            return deque()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[key]
        return failures

    def retry_after(self, *, name: str, address: str, now: float | None = None) -> float:
        """Seconds until an attempt for ``name`` from ``address`` is allowed; 0 if it is now."""
        now = time.monotonic() if now is None else now
        wait = 0.0
        with self._lock:
            for key in (("account", name), ("address", address)):
                failures = self._recent(key, now)
                limit = self.limits[key[0]]
                if len(failures) >= limit:
                    wait = max(wait, failures[-limit] + self.window - now)
        return wait

    def failed(self, *, name: str, address: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._failures) >= MAX_KEYS:  # bounded memory under a flood of names
                self._failures.clear()
            for key in (("account", name), ("address", address)):
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, *, name: str) -> None:
        with self._lock:
            self._failures.pop(("account", name), None)

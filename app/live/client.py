"""Talking to the demo worker over HTTP, without blocking the event loop.

Errors, from the caller's point of view:

- :class:`WorkerUnavailable`: the worker could not give an answer (down,
  refused, too slow, busy, or a 5xx). The page says "live check unavailable"
  and shows the authored text; nothing is cached.
- :class:`WorkerRejected`: the worker answered that the request is wrong (a
  4xx): an out-of-bounds parameter, say. Its message names what to change.

Only a failed *connection* is retried: the request never reached the worker,
so sending it again cannot run a demo twice.
"""

import asyncio
from typing import Any

import httpx

CONNECT_TIMEOUT = 2.0
CONNECT_RETRIES = 1


class WorkerError(Exception):
    """Base of the worker client's errors."""


class WorkerUnavailable(WorkerError):
    """No usable answer from the worker; the message says why."""


class WorkerRejected(WorkerError):
    """The worker refused the request as invalid; the message says what to fix."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class WorkerClient:
    """An ``httpx.AsyncClient`` to one worker, with timeouts and a concurrency cap."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float,
        max_concurrency: int = 4,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
            # httpx's transport retries a failed connection (with backoff), e.g.
            # while a local worker is still starting; it never retries a request
            # that reached the worker, so a demo is not computed twice.
            transport=transport or httpx.AsyncHTTPTransport(retries=CONNECT_RETRIES),
        )
        # The worker runs a few demos at a time; queueing here keeps a burst of
        # page loads from piling requests onto it that would only time out.
        self._slots = asyncio.Semaphore(max_concurrency)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async with self._slots:
            try:
                return await self._client.request(method, path, **kwargs)
            except httpx.ConnectError as exc:
                raise WorkerUnavailable(f"cannot connect to the worker at {self.base_url}") from exc
            except httpx.TimeoutException as exc:
                raise WorkerUnavailable("the worker did not answer in time") from exc
            except httpx.HTTPError as exc:
                raise WorkerUnavailable(f"worker request failed: {exc}") from exc

    async def run(self, demo: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run one demo and return its result JSON."""
        response = await self._request("POST", f"/demos/{demo}", json=params)
        return _json_or_raise(response)

    async def health(self) -> dict[str, Any]:
        return _json_or_raise(await self._request("GET", "/health"))


def _json_or_raise(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 500:
        raise WorkerUnavailable(f"the worker answered {response.status_code}")
    try:
        body = response.json()
    except ValueError as exc:
        raise WorkerUnavailable("the worker answered something that is not JSON") from exc
    if response.status_code >= 400:
        raise WorkerRejected(_detail(body), response.status_code)
    if not isinstance(body, dict):
        raise WorkerUnavailable("the worker answered JSON that is not an object")
    return body


def _detail(body: Any) -> str:
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, list):
        return "; ".join(
            str(item.get("message", item)) if isinstance(item, dict) else str(item)
            for item in detail
        )
    return str(detail or body)

"""The last word on a request that failed: a page with its status and headers, never a reset.

An exception no route or handler turned into a response reaches this
middleware, which sits inside the security headers and outside everything
else. It answers with the error page (or its htmx fragment) and returns
normally, so the response carries the security headers and the connection
stays open for the next request. Starlette's own last resort answers in plain
text and then re-raises, which makes the server drop the connection.

What went wrong decides the answer:

- the database does not answer (stopped, unreachable, locked too long): 503
  with ``Retry-After``, nothing was stored;
- the disk or database is full, or storage became read-only: 507, a message
  that says so, nothing was stored;
- a value the database refused (out of range, a NUL on PostgreSQL) that no
  check before caught: 422; a unique key two requests raced for: 409;
- anything else: 500, logged with its traceback.

A failure after the response began (a download cut short) cannot be
answered again: it is logged, and the response ends there.
"""

import errno
import logging
import sqlite3
from dataclasses import dataclass, field

from sqlalchemy import exc as db
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.middleware.csrf import RENDER_KEY
from app.web.middleware.sessions import SESSION_KEY

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
_SQLITE_FULL, _SQLITE_READONLY = 13, 8
_PG_DISK_FULL, _PG_READ_ONLY = "53100", "25006"
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}

UNAVAILABLE = (
    "The database is not answering, so nothing was read or stored. "
    f"Try again in {RETRY_AFTER_SECONDS} seconds; if it lasts, tell whoever runs this server."
)
STORAGE_FULL = (
    "The server's storage is full or cannot be written, so nothing was stored. "
    "Tell whoever runs this server: it needs free disk space."
)
REFUSED_VALUE = (
    "The database cannot store a value in this request (too large, or with a NUL "
    "character): nothing was stored. Go back, change it and send it again."
)
RACED = "Someone else changed the same thing at the same moment: nothing was stored. Try again."
CRASHED = "The server hit an error it did not expect. It is logged; try again."


@dataclass(frozen=True)
class Failure:
    """How to answer one kind of failure."""

    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)


def _storage_refused(error: BaseException) -> bool:
    """Whether the disk or database is full or read-only (ENOSPC, SQLITE_FULL, 53100...)."""
    if isinstance(error, OSError) and error.errno in _NO_SPACE:
        return True
    original = getattr(error, "orig", None)
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", 0) & 0xFF  # the primary code
        return code in (_SQLITE_FULL, _SQLITE_READONLY)
    return getattr(original, "sqlstate", None) in (_PG_DISK_FULL, _PG_READ_ONLY)


def failure_of(error: BaseException) -> Failure:
    """The answer to ``error``; :data:`CRASHED` (500) for one that is not foreseen here."""
    if _storage_refused(error):
        return Failure(507, STORAGE_FULL)
    if isinstance(error, db.IntegrityError):
        return Failure(409, RACED)
    if isinstance(error, db.DataError) or (
        isinstance(error, db.StatementError)
        and isinstance(error.orig, (OverflowError, UnicodeError, ValueError))
    ):
        return Failure(422, REFUSED_VALUE)
    if isinstance(error, (db.OperationalError, db.InterfaceError, db.TimeoutError)):
        return Failure(503, UNAVAILABLE, {"Retry-After": str(RETRY_AFTER_SECONDS)})
    return Failure(500, CRASHED)


class FailureMiddleware:
    """Answers any exception from inside with :func:`failure_of`'s page (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except Exception as error:
            failure = failure_of(error)
            where = f"{scope['method']} {scope['path']}"
            if failure.status == 500 or started:
                logger.error("unhandled error on %s", where, exc_info=error)
            else:
                logger.warning("%s answered %d: %r", where, failure.status, error)
            if started:
                return  # the response is under way: it can only end here
            await _page(scope, failure)(scope, receive, send)


def _page(scope: Scope, failure: Failure) -> Response:
    # Imported here: app.web.errors renders templates, whose set-up imports
    # the middleware package (the CSRF token in forms).
    from app.web.errors import error_page

    if SESSION_KEY not in scope:  # failed before the session was read: no token to show
        scope[RENDER_KEY] = ""
    headers = {"Cache-Control": "no-store", **failure.headers}
    return error_page(Request(scope), failure.status, failure.message, headers)

"""Error pages: the right status code, and a message that says what to do.

Every error a browser can meet renders the error page (or its htmx fragment)
through :func:`error_page`: HTTP exceptions raised by routes, forms FastAPI
cannot read, the domain errors in :data:`STATUS_OF`, refusals in middleware
(CSRF, sign-in; they call :func:`error_page` themselves, since they run
outside FastAPI's exception handling), and any other failure, answered by
:mod:`app.web.middleware.failures` (503 when the database is gone, 507 when
storage is full, 500 for a crash).
"""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.demos import InvalidParams, UnknownDemo
from app.practice.errors import (
    InterviewError,
    ReviewConflict,
    ReviewError,
    RoundConflict,
    UnknownItem,
    UnknownRound,
)
from app.practice.progress import ProgressFileError
from app.web.render import render

TITLES = {
    400: "Bad request",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    411: "Length required",
    413: "Too large",
    422: "Check what you sent",
    429: "Too many attempts",
    500: "Something went wrong",
    503: "Try again in a moment",
    507: "Storage full",
}

# Domain errors → HTTP status, most specific first: the one table routes and
# handlers consult, so the same error has the same status everywhere.
STATUS_OF: tuple[tuple[type[Exception], int], ...] = (
    (UnknownItem, 404),
    (ReviewConflict, 409),
    (ReviewError, 422),
    (UnknownRound, 404),
    (RoundConflict, 409),
    (InterviewError, 422),
    (UnknownDemo, 404),
    (InvalidParams, 422),
    (ProgressFileError, 422),
)


def status_of(error: Exception) -> int:
    """The HTTP status of a domain error (422 for one the table does not name)."""
    return next((status for kind, status in STATUS_OF if isinstance(error, kind)), 422)


def error_page(
    request: Request, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    """The error page, or its fragment for htmx, with ``status``."""
    context = {"status": status, "title": TITLES.get(status, "Error"), "message": message}
    return render(
        request,
        "error.html",
        context,
        fragment="_error.html",
        status_code=status,
        headers=headers,
    )


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    # Starlette's own "Not Found" only repeats the title: templates/_error_message.html
    # says instead what happened and what to do.
    return error_page(request, exc.status_code, exc.detail, getattr(exc, "headers", None))


async def validation_exception_handler(request: Request, exc: Exception) -> Response:
    """A form or query FastAPI could not read (too long, wrong type): a page that names it.

    The web app's only JSON endpoints take no parameters, so every request that
    reaches here came from a page (or a forged form) and gets a page back.
    """
    assert isinstance(exc, RequestValidationError)
    problems = [
        f"{'.'.join(str(part) for part in error['loc'][1:]) or error['loc'][0]}: {error['msg']}"
        for error in exc.errors()[:5]
    ]
    message = "; ".join(problems) + ". Nothing was stored: go back, fix it and send it again."
    return error_page(request, 422, message)


async def domain_error_handler(request: Request, exc: Exception) -> Response:
    """A domain error no route turned into a page: its status from :data:`STATUS_OF`."""
    # Not capitalised: messages may start with a parameter's name (d_k).
    return error_page(request, status_of(exc), str(exc).rstrip(".") + ".")


def install(app: FastAPI) -> None:
    """Register every handler above on ``app``."""
    app.add_exception_handler(StarletteHTTPException, http_exception_handler)
    app.add_exception_handler(RequestValidationError, validation_exception_handler)
    for kind, _status in STATUS_OF:
        app.add_exception_handler(kind, domain_error_handler)
    # Anything else (a crash, the database gone) is answered by
    # app.web.middleware.failures, outside the other middleware.

"""Error pages: the right status code, and a message that says what to do."""

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.web.templating import templates

_TITLES = {
    400: "Bad request",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    422: "Check what you sent",
    429: "Too many attempts",
}


def _error_page(
    request: Request, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    template = "_error.html" if request.headers.get("HX-Request") else "error.html"
    return templates.TemplateResponse(
        request,
        template,
        {
            "status": status,
            "title": _TITLES.get(status, "Something went wrong"),
            "message": message,
        },
        status_code=status,
        headers=headers,
    )


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    return _error_page(request, exc.status_code, exc.detail, getattr(exc, "headers", None))


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
    return _error_page(request, 422, message)

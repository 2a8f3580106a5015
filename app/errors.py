"""Error pages: the right status code, and a message that says what to do."""

from fastapi import Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.templating import templates

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


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    template = "_error.html" if request.headers.get("HX-Request") else "error.html"
    return templates.TemplateResponse(
        request,
        template,
        {
            "status": exc.status_code,
            "title": _TITLES.get(exc.status_code, "Something went wrong"),
            "message": exc.detail,
        },
        status_code=exc.status_code,
        headers=getattr(exc, "headers", None),
    )

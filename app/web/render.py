"""One way to answer a request: the whole page, or the fragment htmx swaps in.

Every route and error handler renders through :func:`render`, so the same
test decides page or fragment everywhere: htmx's ``HX-Request`` header, except
on a history-restore request (htmx asks for the full page when its cache
misses on Back). Each response says ``Vary: HX-Request`` so a cache between
the browser and us never serves a fragment as a page or the other way round.
"""

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.web.templating import templates


def wants_fragment(request: Request) -> bool:
    """Whether htmx sent the request and will swap the answer into the page."""
    headers = request.headers
    return headers.get("HX-Request") == "true" and not headers.get("HX-History-Restore-Request")


def render(
    request: Request,
    page: str,
    context: Mapping[str, Any],
    *,
    fragment: str | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """Render ``fragment`` for htmx when one is given, else the full ``page``.

    Args:
        request: the request being answered.
        page: the template of the whole page (extends ``base.html``).
        context: the template's context; both templates take the same one.
        fragment: the partial that htmx swaps in, if the page has one.
        status_code: the response status.
        headers: extra response headers (``Retry-After``, say).
    """
    name = fragment if fragment is not None and wants_fragment(request) else page
    response = templates.TemplateResponse(
        request, name, dict(context), status_code=status_code, headers=dict(headers or {})
    )
    vary = response.headers.get("Vary")
    response.headers["Vary"] = f"{vary}, HX-Request" if vary else "HX-Request"
    return response

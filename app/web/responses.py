"""Every status a route can answer, for the OpenAPI schema that schemathesis checks.

Routes name their own statuses (``responses=pages(404, 422)``); what any
request may meet, whatever the route, is documented once for the whole app
(:func:`every_route`): a form or query FastAPI cannot read (422), a crash
(500), the database gone (503), full storage (507) and, in accounts mode, a
signed-out request (303 to the sign-in page, or 401). Unsafe methods add what
the CSRF middleware refuses (:data:`UNSAFE`). Every error is an HTML page (or
its htmx fragment), never JSON: the web app's only JSON answers are
``/healthz`` and ``/progress``.
"""

from typing import Any

HTML: dict[str, Any] = {"text/html": {"schema": {"type": "string"}}}

DESCRIPTIONS = {
    201: "Made; the page shows it.",
    204: "Nothing changed since the version the page has.",
    303: "Done: go to the page in Location.",
    401: "Signed out (accounts mode): sign in first.",
    403: "Refused: a form without this session's CSRF token, from another site, "
    "or not allowed to this account.",
    404: "No such card, deck, demo, item, invite or user.",
    409: "Conflicts with what happened meanwhile (a second click, a name taken).",
    411: "An upload without a Content-Length.",
    413: "A form or upload larger than the limit.",
    422: "A form, query or file that cannot be used; the page names the field and why.",
    429: "Too many failed sign-ins: the page says how long to wait.",
    500: "The server hit an error it did not expect (logged).",
    503: "Try again later (Retry-After): the database or the demo worker did not answer, "
    "or too many sign-ins are waiting.",
    507: "The server's storage is full or cannot be written: nothing was stored.",
}
# Redirects and "no change" carry no page.
_NO_BODY = {204, 303}


def pages(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that can answer ``statuses`` (each an HTML page)."""
    return {
        status: (
            {"description": DESCRIPTIONS[status]}
            if status in _NO_BODY
            else {"description": DESCRIPTIONS[status], "content": HTML}
        )
        for status in statuses
    }


UNSAFE = pages(403, 411, 413)  # what CSRFMiddleware answers a POST it refuses


def every_route(*, accounts: bool) -> dict[int | str, dict[str, Any]]:
    """What any route may answer in this mode (``FastAPI(responses=...)``)."""
    return pages(422, 500, 503, 507, *((303, 401) if accounts else ()))

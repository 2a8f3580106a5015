"""CSRF protection: every state-changing request carries the session's token.

A synchronizer token: the token lives in the signed session cookie
(:mod:`app.web.middleware.sessions`), which another site can neither read nor set, and each
page repeats it in ``<meta name="csrf-token">`` and in a hidden ``csrf_token``
field of every POST form. ``static/app.js`` copies the meta tag into the
``X-CSRF-Token`` header of each htmx request; a plain form sends the field,
and a file upload sends it as its first part.
A POST, PUT, PATCH or DELETE whose token does not match gets 403 and reaches
no route, so nothing is stored.

A visitor who has not sent a form yet has no session and no cookie, so their
pages carry the day's visitor token (:mod:`app.web.middleware.sessions`),
which is no secret. A request with it must also be vouched for by the browser
(``Sec-Fetch-Site: same-origin`` or ``none``, or this site's ``Origin``); it
then starts the visitor's own session, with a random token, before the route
runs, so whatever the route renders carries the new token.

A second layer, should a token ever leak: browsers say where a request comes
from. An unsafe request whose ``Sec-Fetch-Site`` is neither ``same-origin``
nor ``none`` (typed in, a bookmark), or whose ``Origin`` is not this site's
(the request's own scheme and ``Host``, or ``QUIZLAB_PUBLIC_URL``), is refused
too, token or not. A request with neither header (an old browser, a script)
is judged by its token alone.

Cached pages (the card page, :mod:`app.web.pagecache`) are rendered with
:data:`PLACEHOLDER` in place of the token; :func:`personalise` swaps in the
session's token on the way out, so the cache never holds anyone's token.
"""

import hmac
import re
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.middleware.sessions import session_of

HEADER = b"x-csrf-token"
FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
# Same length as a token (43 characters), so swapping it in keeps Content-Length right.
PLACEHOLDER = "csrf-placeholder-".ljust(43, "0")
RENDER_KEY = "quizlab.csrf_render"
# Forms here are short (an answer is at most 20,000 characters); a longer body is refused.
MAX_FORM_BYTES = 1_000_000
# Uploads (a progress file on the stats page) may be larger. 16 MB (some 40,000
# reviews) peaks near 210 MB in the web process, inside a 256 MB replica
# (docs/self-hosting.md); bigger files go through `quizlab progress import`.
# Only the first part, the token, is read here.
MAX_UPLOAD_BYTES = 16_000_000
FIRST_PART_BYTES = 16_384
MESSAGE = "This form has expired or did not come from this site: reload the page and send it again."
CROSS_SITE = (
    "This request came from another site, so it was refused: open Quizlab itself "
    "and send the form from there."
)
_SAME = (b"same-origin", b"none")


def token_for_render(scope: Scope) -> str:
    """The token a template writes: the session's, or the placeholder for a cached page."""
    override = scope.get(RENDER_KEY)
    if isinstance(override, str):
        return override
    return session_of(scope).csrf


def personalise(body: bytes, scope: Scope) -> bytes:
    """A cached page with the session's token in place of :data:`PLACEHOLDER`."""
    return body.replace(PLACEHOLDER.encode(), session_of(scope).csrf.encode())


def _from_elsewhere(scope: Scope, headers: dict[bytes, bytes]) -> bool:
    """Whether the browser says the request was sent by a page of another origin."""
    site = headers.get(b"sec-fetch-site")
    if site is not None and site not in _SAME:
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    own = f"{scope.get('scheme', 'http')}://{headers.get(b'host', b'').decode('latin-1')}"
    trusted: frozenset[str] = getattr(scope["app"].state, "trusted_origins", frozenset())
    return origin.decode("latin-1") not in {own, *trusted}


def _vouched(scope: Scope, headers: dict[bytes, bytes]) -> bool:
    """Whether the browser says this request comes from this site (not merely not elsewhere)."""
    return headers.get(b"sec-fetch-site") in _SAME or (
        b"origin" in headers and not _from_elsewhere(scope, headers)
    )


def _matches(sent: str | None, expected: tuple[str, ...]) -> bool:
    if sent is None:
        return False
    # Every token is compared, so the time taken does not say which one matched.
    hits = [hmac.compare_digest(sent.encode(), token.encode()) for token in expected]
    return any(hits)


def refusal(
    scope: Scope, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    """The error page for a request a middleware refuses (CSRF, size, sign-in).

    Middleware runs outside FastAPI's exception handlers, so it renders the
    page itself, through the same function the handlers use.
    """
    # Imported here: app.web.errors renders templates, whose set-up imports
    # this module (the CSRF token in forms).
    from app.web.errors import error_page

    return error_page(Request(scope), status, message, headers)


class CSRFMiddleware:
    """Refuses unsafe requests without the session's token (header or form field)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        session = session_of(scope)
        expected = session.accepted_tokens
        headers = dict(scope["headers"])
        if _from_elsewhere(scope, headers):
            await refusal(scope, 403, CROSS_SITE)(scope, receive, send)
            return
        if session.is_visitor and not _vouched(scope, headers):
            await refusal(scope, 403, MESSAGE)(scope, receive, send)
            return
        header = headers.get(HEADER)
        if header is not None:
            if _matches(header.decode("latin-1"), expected):
                await self._accept(scope, receive, send)
            else:
                await refusal(scope, 403, MESSAGE)(scope, receive, send)
            return
        content_type = headers.get(b"content-type", b"")
        if content_type.split(b";")[0].strip().lower() == b"multipart/form-data":
            await self._upload(scope, receive, send, content_type, headers, expected)
            return
        # No header: a plain form. Read the body, find the field, then replay the body.
        content_type = content_type.split(b";")[0].strip()
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > MAX_FORM_BYTES:
                await refusal(scope, 413, "This form is too large.")(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        sent = None
        if content_type == b"application/x-www-form-urlencoded":
            body = b"".join(m.get("body", b"") for m in messages)
            try:
                values = parse_qs(body.decode("latin-1"), max_num_fields=1000).get(FIELD)
            except ValueError:  # too many fields
                values = None
            sent = values[0] if values else None
        if not _matches(sent, expected):
            await refusal(scope, 403, MESSAGE)(scope, receive, send)
            return
        await self._accept(scope, _replay(messages, receive), send)

    async def _accept(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a checked request on; a visitor's first one starts their own session."""
        session = session_of(scope)
        if session.is_visitor:
            session.start()
        await self.app(scope, receive, send)

    async def _upload(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        content_type: bytes,
        headers: dict[bytes, bytes],
        expected: tuple[str, ...],
    ) -> None:
        """A file upload: only its first part is read here, and it must be the token.

        Browsers send a form's fields in document order, so a form whose hidden
        token comes first passes; the file itself streams on to the route.
        """
        try:
            length = int(headers.get(b"content-length", b""))
        except ValueError:
            await refusal(scope, 411, "Send the upload with a Content-Length.")(
                scope, receive, send
            )
            return
        if length > MAX_UPLOAD_BYTES:
            too_large = (
                f"This file is too large: at most {MAX_UPLOAD_BYTES // 1_000_000} MB here. "
                "Import a larger one with `quizlab progress import` on the server."
            )
            await refusal(scope, 413, too_large)(scope, receive, send)
            return
        boundary = _boundary(content_type)
        messages: list[Message] = []
        prefix = b""
        sent = None
        while boundary is not None:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            prefix += message.get("body", b"")
            part = _first_part(prefix, boundary)
            if part is not None:
                sent = part[1] if part[0] == FIELD else None
                break
            if len(prefix) > FIRST_PART_BYTES or not message.get("more_body", False):
                break
        if not _matches(sent, expected):
            await refusal(scope, 403, MESSAGE)(scope, receive, send)
            return
        await self._accept(scope, _replay(messages, receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that gives back the messages already read, then the rest of the body."""

    async def replay() -> Message:
        if messages:
            return messages.pop(0)
        return await receive()

    return replay


_BOUNDARY = re.compile(rb'boundary="?([^";]{1,200})"?', re.IGNORECASE)
_PART_NAME = re.compile(rb'content-disposition:[ \t]*form-data;[ \t]*name="([^"]*)"', re.IGNORECASE)


def _boundary(content_type: bytes) -> bytes | None:
    found = _BOUNDARY.search(content_type)
    return found.group(1) if found else None


def _first_part(body: bytes, boundary: bytes) -> tuple[str, str] | None:
    """The name and value of a multipart body's first part, once ``body`` holds all of it."""
    opening = b"--" + boundary + b"\r\n"
    if not body.startswith(opening):
        return ("", "") if len(body) >= len(opening) else None
    head_end = body.find(b"\r\n\r\n", len(opening))
    if head_end < 0:
        return None
    end = body.find(b"\r\n--" + boundary, head_end + 4)
    if end < 0:
        return None
    name = _PART_NAME.search(body[len(opening) : head_end])
    value = body[head_end + 4 : end]
    return (name.group(1).decode("latin-1") if name else "", value.decode("latin-1"))

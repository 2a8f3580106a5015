"""What every response gets on its way out, in one pure ASGI layer.

- ``HEAD`` for every ``GET`` route: FastAPI registers ``@router.get`` for GET
  alone, so a ``HEAD`` (link checkers, monitors, ``curl -I``) would get 405.
  The request runs as a GET and the body is dropped, keeping the GET's
  ``Content-Length``.
- The security headers of :mod:`app.web.middleware.security`.
- gzip for clients that accept it, through Starlette's ``GZipResponder``,
  which leaves alone a response that is already encoded (the card page sends
  bytes compressed once, :mod:`app.web.pagecache`); ``Vary: Accept-Encoding``
  on every response.

One layer instead of three (HEAD, headers, Starlette's ``GZipMiddleware``):
each layer is a coroutine and a ``send`` wrapper per message, and on a
cached page that is a measurable share of the time (docs/performance.md).
"""

from starlette.middleware.gzip import GZipResponder
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.middleware.security import RAW_HEADERS

VARY = (b"vary", b"Accept-Encoding")


class OutboundMiddleware:
    def __init__(self, app: ASGIApp, *, minimum_size: int = 500) -> None:
        self.app = app
        self.minimum_size = minimum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}
        gzip = False
        for name, value in scope["headers"]:
            if name == b"accept-encoding":
                gzip = b"gzip" in value
                break

        async def outbound(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(pair for pair in RAW_HEADERS if pair[0] not in present)
                if b"vary" not in present:
                    headers.append(VARY)
                message["headers"] = headers
            elif head and kind == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": kind, "body": b"", "more_body": False}
            await send(message)

        if gzip:
            await GZipResponder(self.app, self.minimum_size)(scope, receive, outbound)
        else:
            await self.app(scope, receive, outbound)

"""Security headers on every response.

The Content-Security-Policy allows scripts and styles from this origin only:
the pages have no inline script or style (htmx is told not to inject its
indicator style), so card HTML that slipped past the sanitiser still could not
run code. ``frame-ancestors 'none'`` stops the site being framed.
"""

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # Card authors may show images from the web; nothing else leaves the origin.
        "img-src 'self' data: https:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


# Encoded once: each response only appends the pairs its route did not set.
_RAW = [
    (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in HEADERS.items()
]


class SecurityHeadersMiddleware:
    """Adds :data:`HEADERS` to every HTTP response (pure ASGI: no body buffering)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(pair for pair in _RAW if pair[0] not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)

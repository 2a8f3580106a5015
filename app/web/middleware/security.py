"""Security headers on every response.

The Content-Security-Policy allows scripts and styles from this origin only:
the pages have no inline script or style (htmx is told not to inject its
indicator style), so card HTML that slipped past the sanitiser still could not
run code. ``frame-ancestors 'none'`` stops the site being framed. They are
added by :class:`app.web.middleware.outbound.OutboundMiddleware`.
"""

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


# Encoded once: app.web.middleware.outbound appends the pairs a route did not set.
RAW_HEADERS = [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]

"""Pure ASGI middleware: signed sessions, CSRF, accounts, security headers.

Hand-written rather than taken from a library where the library does not fit:
Starlette's ``SessionMiddleware`` cannot rotate or check a CSRF token inside
the same cookie, and the CSRF check must read an upload's first part only
(docs/security.md says why each exists).
"""

"""Quizlab served under a path (``https://example.org/quiz/``), as the public URL says.

Outermost of the middleware: it sets the ASGI ``root_path`` every URL the app
builds starts with (templates, redirects, the session cookie's path, card links
in card HTML) and accepts a request either way a reverse proxy may forward it,
with the prefix stripped (``location /quiz/ { proxy_pass http://app/; }``) or
kept. Starlette's routing matches the part after ``root_path`` in both cases.
FastAPI's own ``root_path`` argument does the first half only and is deprecated;
uvicorn's ``--root-path`` does the second half only for a proxy that strips.
"""

from starlette.types import ASGIApp, Receive, Scope, Send


class RootPathMiddleware:
    def __init__(self, app: ASGIApp, *, root_path: str) -> None:
        self.app = app
        self.root_path = root_path
        self._raw_root = root_path.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        root = self.root_path
        path: str = scope["path"]
        scope = dict(scope, root_path=root)
        if path != root and not path.startswith(root + "/"):  # the proxy stripped it
            scope["path"] = root + path
            raw_path = scope.get("raw_path")
            if raw_path is not None:
                scope["raw_path"] = self._raw_root + raw_path
        await self.app(scope, receive, send)

"""Answer ``HEAD`` for every ``GET`` route: the same status and headers, no body.

FastAPI registers ``@router.get`` for GET alone, so a ``HEAD`` (link checkers,
monitors, ``curl -I``) got 405. This middleware runs the request as a GET and
drops the body on the way out, keeping ``Content-Length`` as the GET's.
"""

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] != "http.response.body":
                await send(message)
            elif not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        await self.app({**scope, "method": "GET"}, receive, without_body)

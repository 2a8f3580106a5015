"""Who is asking: the signed-in account in accounts mode, checked on every request.

In ``QUIZLAB_AUTH=accounts`` every path but the sign-in page, invite links,
static files and the health check needs a signed-in, enabled account. The
cookie's session is looked up on the server every time
(:mod:`app.accounts.sessions`), so a session ended by signing out, signing
out everywhere, a password change or disabling the user ends here at once,
copies of the cookie included. A page request without one is sent to the
sign-in page; anything else gets 401. The account is put in
``request.state.account`` for :func:`app.web.deps.get_learner`.

In ``none`` mode this middleware is not installed: everything is the local
user's, as before accounts existed.
"""

from datetime import UTC, datetime
from urllib.parse import quote

import anyio.to_thread
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.accounts import sessions
from app.accounts.sessions import Account
from app.storage.database import Database
from app.web.middleware.csrf import refusal
from app.web.middleware.sessions import session_of

PUBLIC_PREFIXES = ("/login", "/invite/")
UNCHECKED_PREFIXES = ("/static/", "/healthz")
ACCOUNT_KEY = "account"


def _lookup(database: Database, token: str) -> Account | None:
    with database.session() as session:
        return sessions.account_of(session, token, now=datetime.now(UTC))


class AccountMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith(UNCHECKED_PREFIXES):  # no database round trip for a stylesheet
            await self.app(scope, receive, send)
            return
        session = session_of(scope)
        account = None
        token = session.signed_in
        if token is not None:
            database: Database = scope["app"].state.db
            account = await anyio.to_thread.run_sync(_lookup, database, token)
            if account is None:  # signed out elsewhere, expired, disabled, or removed
                session.sign_out()
        scope.setdefault("state", {})[ACCOUNT_KEY] = account
        if account is not None or path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        root = scope.get("root_path", "")
        headers = dict(scope["headers"])
        if scope["method"] in ("GET", "HEAD") and b"hx-request" not in headers:
            query = scope.get("query_string", b"").decode("latin-1")
            target = path + (f"?{query}" if query else "")
            response: Response = RedirectResponse(
                f"{root}/login?next={quote(target, safe='')}", status_code=303
            )
        else:
            response = refusal(
                scope,
                401,
                "Sign in first: your session has ended.",
                headers={"HX-Redirect": f"{root}/login"},
            )
        await response(scope, receive, send)

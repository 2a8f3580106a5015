"""Who is asking: the signed-in account in accounts mode, checked on every request.

In ``QUIZLAB_AUTH=accounts`` every path but the sign-in page, invite links,
static files and the health check needs a signed-in, enabled account whose
password has not changed since the session began. A page request without one
is sent to the sign-in page; anything else gets 401. The account is put in
``request.state.account`` for :func:`app.web.routes.progress.get_learner`.

In ``none`` mode this middleware is not installed: everything is the local
user's, as before accounts existed.
"""

from urllib.parse import quote

import anyio.to_thread
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.accounts import users as accounts
from app.storage.database import Database
from app.web.middleware.csrf import refusal
from app.web.middleware.sessions import session_of

PUBLIC_PREFIXES = ("/login", "/invite/")
UNCHECKED_PREFIXES = ("/static/", "/healthz")
ACCOUNT_KEY = "account"


def _lookup(database: Database, user_id: int, stamp: str) -> accounts.Account | None:
    with database.session() as session:
        return accounts.active_account(session, user_id=user_id, session_stamp=stamp)


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
        user_id = session.get("u")
        if isinstance(user_id, int):
            database: Database = scope["app"].state.db
            account = await anyio.to_thread.run_sync(
                _lookup, database, user_id, str(session.get("s", ""))
            )
            if account is None:  # disabled, password changed, or removed
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

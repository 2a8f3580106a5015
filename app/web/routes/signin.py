"""Sign in, sign out, and accept an invite: every route that checks or sets a password unasked.

Password work (Argon2) runs through :func:`app.accounts.passwords.gated`: in
a thread, a few at a time, so a burst of sign-ins neither blocks the event
loop nor multiplies memory; a request that finds too many waiting gets 503
with ``Retry-After``. The handlers are ``async`` so that waiting for a slot
holds no thread; each gated function opens its own database session.
"""

import time
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import passwords, sessions
from app.accounts import users as accounts
from app.accounts.limits import LoginLimiter
from app.accounts.users import NameTaken
from app.storage.database import Database
from app.storage.models import Invite
from app.web.deps import AccountDep, DatabaseDep, SessionDep
from app.web.fields import StoredText
from app.web.middleware.auth import ACCOUNT_KEY
from app.web.middleware.sessions import session_of
from app.web.responses import UNSAFE, pages
from app.web.templating import templates

router = APIRouter()

WRONG = "Wrong name or password: check both and try again."
# Every refused sign-in takes at least this long, whatever the reason, so the
# time taken tells nothing about which names exist.
MIN_REFUSAL_SECONDS = 0.25


def _safe_next(target: str) -> str:
    """A path on this site to return to after sign-in; anything else goes home."""
    if target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return "/"


def page(
    request: Request,
    name: str,
    context: dict[str, Any],
    status_code: int = 200,
    busy: passwords.Busy | None = None,
) -> HTMLResponse:
    """``name`` rendered; with ``busy``, a 503 whose form says to retry, and when."""
    if busy is None:
        return templates.TemplateResponse(request, name, context, status_code=status_code)
    headers = {"Retry-After": str(busy.retry_after)}
    context = context | {"error": str(busy)}
    return templates.TemplateResponse(request, name, context, status_code=503, headers=headers)


@router.get("/login", response_class=HTMLResponse, name="login", responses=pages(303))
async def login_page(
    request: Request, next: Annotated[str, Query(max_length=2000)] = "/"
) -> Response:
    if getattr(request.state, ACCOUNT_KEY, None) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    context = {"next": _safe_next(next), "name": "", "error": None, "signed_out": True}
    return page(request, "login.html", context)


@dataclass(frozen=True)
class _Checked:
    wait: float = 0.0  # > 0: refused by the limiter, the password unchecked
    token: str | None = None  # the new session's, when the password was right


def _check(
    database: Database, limiter: LoginLimiter, *, name: str, address: str, password: str
) -> _Checked:
    """Count the attempt, check the password, start a session: inside a password slot."""
    with database.session() as session:
        attempt = limiter.attempt(session, name=name, address=address)
        if attempt.wait > 0:
            return _Checked(wait=attempt.wait)
        user = accounts.authenticate(session, name=name, password=password)
        if user is None or user.id is None:
            limiter.failed(session, attempt)
            return _Checked()
        limiter.succeeded(session, attempt)
        return _Checked(token=sessions.start(session, user_id=user.id, now=accounts.now_utc()))


@router.post("/login", response_class=HTMLResponse, responses=pages(303, 429) | UNSAFE)
async def login(
    request: Request,
    database: DatabaseDep,
    name: Annotated[StoredText, Form(max_length=100)] = "",
    password: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    started = time.monotonic()
    context = {"next": _safe_next(next), "name": name, "signed_out": True}
    address = request.client.host if request.client else "unknown"
    check = partial(
        _check,
        database,
        request.app.state.login_limiter,
        name=name.strip().lower(),
        address=address,
        password=password,
    )
    try:
        checked = await passwords.gated(check)
    except passwords.Busy as busy:
        return page(request, "login.html", context, busy=busy)
    if checked.wait > 0:
        minutes = max(1, round(checked.wait / 60))
        context["error"] = (
            f"Too many failed sign-ins for this name or from this address: "
            f"wait {minutes} minute{'s' if minutes != 1 else ''} and try again."
        )
        return page(request, "login.html", context, status_code=429)
    if checked.token is None:
        await anyio.sleep(max(0.0, MIN_REFUSAL_SECONDS - (time.monotonic() - started)))
        context["error"] = WRONG
        return page(request, "login.html", context, status_code=401)
    session_of(request.scope).sign_in(checked.token)
    return RedirectResponse(_safe_next(next), status_code=303)


def _signed_out(request: Request) -> RedirectResponse:
    session_of(request.scope).sign_out()
    return RedirectResponse(request.url_for("login").path, status_code=303)


@router.post("/logout", name="logout", responses=pages(303) | UNSAFE)
def logout(request: Request, session: SessionDep) -> Response:
    """End this browser's session on the server, so a copy of the cookie is worth nothing."""
    token = session_of(request.scope).signed_in
    if token is not None:
        sessions.end(session, token)
    return _signed_out(request)


@router.post("/logout/everywhere", name="logout_everywhere", responses=pages(303) | UNSAFE)
def logout_everywhere(request: Request, session: SessionDep, account: AccountDep) -> Response:
    """End every session of the signed-in user, on every device, this one included."""
    sessions.end_all(session, account.id)
    return _signed_out(request)


def _invite_context(token: str, invite: Invite) -> dict[str, Any]:
    return {
        "token": token,
        "name": invite.name,
        "error": None,
        "is_admin": invite.is_admin,
        "signed_out": True,
    }


def _open_invite(database: Database, token: str) -> Invite:
    """The invite still waiting for ``token``; :class:`HTTPException` 404 once it is gone."""
    with database.session() as session:
        try:
            invite = accounts.open_invite(session, token, now=accounts.now_utc())
        except LookupError as error:
            raise HTTPException(404, str(error)) from None
        session.expunge(invite)
        return invite


@router.get("/invite/{token}", response_class=HTMLResponse, name="invite", responses=pages(404))
def invite_page(request: Request, database: DatabaseDep, token: str) -> HTMLResponse:
    return page(request, "invite.html", _invite_context(token, _open_invite(database, token)))


def _accept(database: Database, token: str, *, password: str, repeated: str) -> str:
    """Make the invited user and start their session: inside a password slot."""
    with database.session() as session:
        now = accounts.now_utc()
        user = accounts.accept_invite(session, token, password=password, repeated=repeated, now=now)
        assert user.id is not None
        return sessions.start(session, user_id=user.id, now=now)


@router.post(
    "/invite/{token}", response_class=HTMLResponse, responses=pages(303, 404, 409) | UNSAFE
)
async def accept_invite(
    request: Request,
    database: DatabaseDep,
    token: str,
    password: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    repeated: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
) -> Response:
    """Set the password of the invited user. No name is asked: the invite carries it."""
    accept = partial(_accept, database, token, password=password, repeated=repeated)
    try:
        session_token = await passwords.gated(accept)
    except LookupError as error:
        raise HTTPException(404, str(error)) from None
    except (accounts.AccountError, passwords.Busy) as error:
        invite = await anyio.to_thread.run_sync(_open_invite, database, token)
        context = _invite_context(token, invite)
        if isinstance(error, passwords.Busy):
            return page(request, "invite.html", context, busy=error)
        context["error"] = str(error)
        status = 409 if isinstance(error, NameTaken) else 422
        return page(request, "invite.html", context, status_code=status)
    session_of(request.scope).sign_in(session_token)
    return RedirectResponse(request.url_for("home").path, status_code=303)

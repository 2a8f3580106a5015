"""Sign in and out, change password, and the admin's users and invites (accounts mode only).

The handlers are plain ``def``: Argon2 takes tens of milliseconds of CPU, so
FastAPI runs them in its thread pool, off the event loop.
"""

import time
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import sessions
from app.accounts import users as accounts
from app.accounts.limits import LoginLimiter
from app.accounts.sessions import Account
from app.accounts.users import AccountError, NameTaken
from app.web.deps import AccountDep, AdminDep, SessionDep
from app.web.fields import StoredText
from app.web.middleware.auth import ACCOUNT_KEY
from app.web.middleware.sessions import session_of
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


def _page(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status_code)


@router.get("/login", response_class=HTMLResponse, name="login")
async def login_page(
    request: Request, next: Annotated[str, Query(max_length=2000)] = "/"
) -> Response:
    if getattr(request.state, ACCOUNT_KEY, None) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    context = {"next": _safe_next(next), "name": "", "error": None, "signed_out": True}
    return _page(request, "login.html", context)


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    session: SessionDep,
    name: Annotated[StoredText, Form(max_length=100)] = "",
    password: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    started = time.monotonic()
    limiter: LoginLimiter = request.app.state.login_limiter
    key = name.strip().lower()
    address = request.client.host if request.client else "unknown"
    context = {"next": _safe_next(next), "name": name, "signed_out": True}
    attempt = limiter.attempt(session, name=key, address=address)
    if attempt.wait > 0:
        minutes = max(1, round(attempt.wait / 60))
        context["error"] = (
            f"Too many failed sign-ins for this name or from this address: "
            f"wait {minutes} minute{'s' if minutes != 1 else ''} and try again."
        )
        return _page(request, "login.html", context, status_code=429)
    user = accounts.authenticate(session, name=key, password=password)
    if user is None:
        limiter.failed(session, attempt)
        # Sync handler in the thread pool: sleeping here does not block the event loop.
        time.sleep(max(0.0, MIN_REFUSAL_SECONDS - (time.monotonic() - started)))
        context["error"] = WRONG
        return _page(request, "login.html", context, status_code=401)
    limiter.succeeded(session, attempt)
    assert user.id is not None
    _sign_in(request, session, user.id)
    return RedirectResponse(_safe_next(next), status_code=303)


def _sign_in(request: Request, session: SessionDep, user_id: int) -> None:
    """Start a server-side session for ``user_id`` and name it in this browser's cookie."""
    token = sessions.start(session, user_id=user_id, now=accounts.now_utc())
    session_of(request.scope).sign_in(token)


def _signed_out(request: Request) -> RedirectResponse:
    session_of(request.scope).sign_out()
    return RedirectResponse(request.url_for("login").path, status_code=303)


@router.post("/logout", name="logout")
def logout(request: Request, session: SessionDep) -> Response:
    """End this browser's session on the server, so a copy of the cookie is worth nothing."""
    token = session_of(request.scope).signed_in
    if token is not None:
        sessions.end(session, token)
    return _signed_out(request)


@router.post("/logout/everywhere", name="logout_everywhere")
def logout_everywhere(request: Request, session: SessionDep, account: AccountDep) -> Response:
    """End every session of the signed-in user, on every device, this one included."""
    sessions.end_all(session, account.id)
    return _signed_out(request)


@router.get("/account", response_class=HTMLResponse, name="account")
async def account_page(request: Request, account: AccountDep) -> HTMLResponse:
    context = {"account": account, "error": None, "message": None}
    return _page(request, "account.html", context)


@router.post("/account/password", response_class=HTMLResponse, name="change_password")
def change_password(
    request: Request,
    session: SessionDep,
    account: AccountDep,
    current: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    new: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    repeated: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
) -> HTMLResponse:
    context: dict[str, Any] = {"account": account, "error": None, "message": None}
    try:
        accounts.change_password(
            session, user_id=account.id, current=current, new=new, repeated=repeated
        )
    except AccountError as error:
        context["error"] = str(error)
        return _page(request, "account.html", context, status_code=422)
    # Every session of the user ended with the change; this browser gets a new one.
    _sign_in(request, session, account.id)
    context["message"] = "Password changed. Other sessions are signed out."
    return _page(request, "account.html", context)


def _users_page(
    request: Request,
    session: SessionDep,
    admin: Account,
    *,
    invite_url: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context = {
        "account": admin,
        "users": accounts.users(session),
        "invite_url": invite_url,
        "error": error,
    }
    return _page(request, "users.html", context, status_code=status_code)


@router.get("/admin/users", response_class=HTMLResponse, name="users")
def users_page(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _users_page(request, session, admin)


@router.post("/admin/invites", response_class=HTMLResponse, name="invites")
def make_invite(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    is_admin: Annotated[bool, Form()] = False,
) -> HTMLResponse:
    token = accounts.create_invite(session, by=admin.id, is_admin=is_admin, now=accounts.now_utc())
    return _users_page(
        request, session, admin, invite_url=_invite_url(request, token), status_code=201
    )


def _invite_url(request: Request, token: str) -> str:
    """The link to send: on ``QUIZLAB_PUBLIC_URL`` when set, never on a forged ``Host``."""
    public: str | None = request.app.state.settings.public_url
    if public is None:  # documented: without it, the address the admin used
        return str(request.url_for("invite", token=token))
    return public.rstrip("/") + str(request.app.url_path_for("invite", token=token))


@router.post("/admin/users/{name}/disabled", response_class=HTMLResponse, name="user_disabled")
def set_disabled(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    name: Annotated[StoredText, Path(max_length=100)],
    disabled: Annotated[bool, Form()],
) -> HTMLResponse:
    try:
        accounts.set_disabled(session, name=name, disabled=disabled, by=admin.id)
    except LookupError as error:
        raise HTTPException(404, str(error)) from None
    except AccountError as error:
        return _users_page(request, session, admin, error=str(error), status_code=409)
    return _users_page(request, session, admin)


@router.get("/invite/{token}", response_class=HTMLResponse, name="invite")
def invite_page(request: Request, session: SessionDep, token: str) -> HTMLResponse:
    try:
        invite = accounts.open_invite(session, token, now=accounts.now_utc())
    except LookupError as error:
        raise HTTPException(404, str(error)) from None
    context = {
        "token": token,
        "name": "",
        "error": None,
        "is_admin": invite.is_admin,
        "signed_out": True,
    }
    return _page(request, "invite.html", context)


@router.post("/invite/{token}", response_class=HTMLResponse)
def accept_invite(
    request: Request,
    session: SessionDep,
    token: str,
    name: Annotated[StoredText, Form(max_length=100)] = "",
    password: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    repeated: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
) -> Response:
    try:
        user = accounts.accept_invite(
            session, token, name=name, password=password, repeated=repeated, now=accounts.now_utc()
        )
    except LookupError as error:
        raise HTTPException(404, str(error)) from None
    except AccountError as error:
        invite = accounts.open_invite(session, token, now=accounts.now_utc())
        context = {
            "token": token,
            "name": name,
            "error": str(error),
            "is_admin": invite.is_admin,
            "signed_out": True,
        }
        status = 409 if isinstance(error, NameTaken) else 422
        return _page(request, "invite.html", context, status_code=status)
    assert user.id is not None
    _sign_in(request, session, user.id)
    return RedirectResponse(request.url_for("home").path, status_code=303)

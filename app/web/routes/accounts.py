"""The account page (change the password) and the admin's users and invites (accounts mode).

Signing in and out and accepting an invite are in :mod:`app.web.routes.signin`.
Changing the password hashes it, so it runs through
:func:`app.accounts.passwords.gated` like a sign-in.
"""

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Path, Request
from fastapi.responses import HTMLResponse

from app.accounts import passwords, sessions
from app.accounts import users as accounts
from app.accounts.sessions import Account
from app.accounts.users import AccountError, NameTaken
from app.storage.database import Database
from app.web.deps import AccountDep, AdminDep, DatabaseDep, SessionDep
from app.web.fields import StoredText
from app.web.middleware.sessions import session_of
from app.web.responses import UNSAFE, pages
from app.web.routes.signin import page

router = APIRouter()


@router.get("/account", response_class=HTMLResponse, name="account")
async def account_page(request: Request, account: AccountDep) -> HTMLResponse:
    context = {"account": account, "error": None, "message": None}
    return page(request, "account.html", context)


def _change(database: Database, user_id: int, *, current: str, new: str, repeated: str) -> str:
    """Change the password (every session of the user ends) and start this browser's anew."""
    with database.session() as session:
        accounts.change_password(
            session, user_id=user_id, current=current, new=new, repeated=repeated
        )
        return sessions.start(session, user_id=user_id, now=accounts.now_utc())


@router.post(
    "/account/password",
    response_class=HTMLResponse,
    name="change_password",
    responses=UNSAFE,
)
async def change_password(
    request: Request,
    database: DatabaseDep,
    account: AccountDep,
    current: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    new: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
    repeated: Annotated[str, Form(max_length=accounts.MAX_PASSWORD)] = "",
) -> HTMLResponse:
    context: dict[str, Any] = {"account": account, "error": None, "message": None}
    change = partial(_change, database, account.id, current=current, new=new, repeated=repeated)
    try:
        token = await passwords.gated(change)
    except passwords.Busy as busy:
        return page(request, "account.html", context, busy=busy)
    except AccountError as error:
        context["error"] = str(error)
        return page(request, "account.html", context, status_code=422)
    session_of(request.scope).sign_in(token)
    context["message"] = "Password changed. Other sessions are signed out."
    return page(request, "account.html", context)


def _users_page(
    request: Request,
    session: SessionDep,
    admin: Account,
    *,
    invite_url: str | None = None,
    invited: str = "",
    invite_error: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context = {
        "account": admin,
        "users": accounts.users(session),
        "invite_url": invite_url,
        "invited": invited,
        "invite_error": invite_error,
        "error": error,
    }
    return page(request, "users.html", context, status_code=status_code)


@router.get("/admin/users", response_class=HTMLResponse, name="users", responses=pages(403))
def users_page(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _users_page(request, session, admin)


@router.post(
    "/admin/invites",
    response_class=HTMLResponse,
    name="invites",
    status_code=201,
    responses=pages(409) | UNSAFE,
)
def make_invite(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    name: Annotated[StoredText, Form(max_length=100)] = "",
    is_admin: Annotated[bool, Form()] = False,
) -> HTMLResponse:
    """An invite link for the person called ``name``, who then only picks a password."""
    try:
        token = accounts.create_invite(
            session, by=admin.id, name=name, is_admin=is_admin, now=accounts.now_utc()
        )
    except AccountError as error:
        status = 409 if isinstance(error, NameTaken) else 422
        return _users_page(
            request, session, admin, invite_error=str(error), invited=name, status_code=status
        )
    return _users_page(
        request,
        session,
        admin,
        invite_url=_invite_url(request, token),
        invited=accounts.check_name(name),
        status_code=201,
    )


def _invite_url(request: Request, token: str) -> str:
    """The link to send: on ``QUIZLAB_PUBLIC_URL`` when set, never on a forged ``Host``."""
    public: str | None = request.app.state.settings.public_url
    if public is None:  # documented: without it, the address the admin used
        return str(request.url_for("invite", token=token))
    return public.rstrip("/") + str(request.app.url_path_for("invite", token=token))


@router.post(
    "/admin/users/{name}/disabled",
    response_class=HTMLResponse,
    name="user_disabled",
    responses=pages(404, 409) | UNSAFE,
)
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

"""Signed-in sessions kept on the server, so that ending one ends it everywhere it was copied.

Signing in makes a random token: the browser's signed cookie carries it
(app.web.middleware.sessions), and a ``user_session`` row its SHA-256, the
user and when it expires. Every request in accounts mode looks the token up
(:func:`account_of`): no row, an expired row, or a disabled user, and the
request is signed out. Signing out deletes the row (:func:`end`); signing out
everywhere, changing the password and disabling the user delete every row of
that user (:func:`end_all`), so a cookie kept from before reads nothing.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.storage.models import User, UserSession

LIFETIME = timedelta(days=14)


@dataclass(frozen=True)
class Account:
    """A signed-in user as a request sees them."""

    id: int
    name: str
    is_admin: bool


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(session: Session, *, user_id: int, now: datetime) -> str:
    """A new session for ``user_id``; returns the token for the cookie (stored only hashed).

    Expired rows of every user are deleted on the way: sign-ins are rare
    enough for this to keep the table small without a separate job.
    """
    session.execute(delete(UserSession).where(col(UserSession.expires_at) <= now))
    token = secrets.token_urlsafe(32)
    session.add(
        UserSession(
            token_hash=_hash(token), user_id=user_id, created_at=now, expires_at=now + LIFETIME
        )
    )
    session.commit()
    return token


def account_of(session: Session, token: str, *, now: datetime) -> Account | None:
    """The enabled account whose unexpired session ``token`` names, else None (one query)."""
    user = session.scalar(
        select(User)
        .join(UserSession, col(UserSession.user_id) == col(User.id))
        .where(col(UserSession.token_hash) == _hash(token), col(UserSession.expires_at) > now)
    )
    if user is None or user.disabled or user.password_hash is None or user.id is None:
        return None
    return Account(id=user.id, name=user.name, is_admin=user.is_admin)


def end(session: Session, token: str) -> None:
    """Sign out the one session ``token`` names (a no-op for one already ended)."""
    session.execute(delete(UserSession).where(col(UserSession.token_hash) == _hash(token)))
    session.commit()


def revoke_all(session: Session, user_id: int) -> None:
    """Delete every session of ``user_id``. The caller commits.

    The password change and disabling a user call it inside their own
    transaction, so the change and the sign-out happen together or not at all.
    """
    session.execute(delete(UserSession).where(col(UserSession.user_id) == user_id))


def end_all(session: Session, user_id: int) -> None:
    """Sign out every session of ``user_id``, this browser's too ("sign out everywhere")."""
    revoke_all(session, user_id)
    session.commit()

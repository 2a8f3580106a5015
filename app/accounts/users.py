"""Accounts: users who sign in with a password, admins, invite links.

Used when ``QUIZLAB_AUTH=accounts``. Passwords are hashed with Argon2id
(:mod:`app.accounts.passwords`, which also bounds how many run at once); the database keeps
only the hash. An invite link's token is kept as its SHA-256, so the table
never holds a usable link.

Switching a single-user install to accounts loses nothing: the first admin
created (``quizlab user add NAME --admin``) *becomes* the local user, renamed
and given a password, so every progress row already names them.

Functions take a :class:`~sqlalchemy.orm.Session` and commit their own change;
they know nothing of HTTP. Errors a person can cause raise :class:`AccountError`
with a message that says what to fix.
"""

import hashlib
import re
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlmodel import col

from app.accounts import passwords
from app.accounts.sessions import revoke_all
from app.storage.database import LOCAL_USER
from app.storage.models import Invite, User

MIN_PASSWORD = 10
MAX_PASSWORD = 1024
INVITE_DAYS = 7
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,39}$")

_TAKEN = "There is already a user called '{name}': pick another name."
_TAKEN_SINCE = (
    "The name '{name}' this invite was made for has been taken since: ask for a new invite."
)

# Verified when the name is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = passwords.hash_password(secrets.token_urlsafe(16))


class AccountError(ValueError):
    """Something a person asked for that cannot be done; the message says why."""


class NameTaken(AccountError):
    pass


def hash_password(password: str) -> str:
    return passwords.hash_password(password)


def check_name(name: str) -> str:
    name = name.strip().lower()
    if not NAME.fullmatch(name):
        raise AccountError(
            "A name is 2 to 40 characters: lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    if name == LOCAL_USER:
        raise AccountError(f"'{LOCAL_USER}' is reserved for the single-user mode: pick another.")
    return name


def check_password(password: str, repeated: str | None = None) -> str:
    if repeated is not None and password != repeated:
        raise AccountError("The two passwords differ: type the same password twice.")
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"A password has at least {MIN_PASSWORD} characters.")
    if len(password) > MAX_PASSWORD:
        raise AccountError(f"A password has at most {MAX_PASSWORD} characters.")
    if len(set(password)) == 1:
        raise AccountError("A password of one character repeated is guessed at once: pick another.")
    if passwords.is_common(password):
        raise AccountError(
            "This is one of the most common passwords, which are guessed first: pick another."
        )
    return password


def _by_name(session: Session, name: str) -> User | None:
    return session.scalar(select(User).where(col(User.name) == name))


def create_user(
    session: Session, *, name: str, password: str, is_admin: bool = False, now: datetime
) -> User:
    """Add a user; the first admin on an install with a local user takes over its progress."""
    name = check_name(name)
    check_password(password)
    if _by_name(session, name) is not None:
        raise NameTaken(_TAKEN.format(name=name))
    user = None
    if is_admin and not has_admin(session):
        user = local_user(session)
        if user is not None:
            user.name = name
    if user is None:
        user = User(name=name, created_at=now)
        session.add(user)
    user.password_hash = hash_password(password)
    user.is_admin = is_admin
    user.disabled = False
    _commit_new_name(session, _TAKEN.format(name=name))
    return user


def user_id(session: Session, name: str) -> int | None:
    """The id of the user called ``name``, if any."""
    user = _by_name(session, name.strip().lower())
    return user.id if user is not None else None


def local_user(session: Session) -> User | None:
    """The single-user install's user, if there is one."""
    return _by_name(session, LOCAL_USER)


def has_admin(session: Session) -> bool:
    count = session.scalar(
        select(func.count()).select_from(User).where(col(User.is_admin).is_(True))
    )
    return bool(count)


def authenticate(session: Session, *, name: str, password: str) -> User | None:
    """The user if ``name`` and ``password`` match an enabled account, else None.

    Unknown names and disabled users cost one Argon2 verification too, so the
    time taken does not tell which names exist.
    """
    user = _by_name(session, name.strip().lower()[:100])
    password = password[:MAX_PASSWORD]
    stored = user.password_hash if user is not None and user.password_hash else _DUMMY_HASH
    ok = passwords.verify(stored, password) and stored is not _DUMMY_HASH
    if not ok or user is None or user.disabled:
        return None
    if passwords.needs_rehash(stored):
        user.password_hash = hash_password(password)
        session.commit()
    return user


def change_password(
    session: Session, *, user_id: int, current: str, new: str, repeated: str
) -> None:
    """Set a new password after checking the current one, and end every session of the user."""
    user = session.get(User, user_id)
    if user is None or user.password_hash is None:
        raise AccountError("This account has no password to change.")
    if not passwords.verify(user.password_hash, current):
        raise AccountError("The current password is wrong: nothing was changed.")
    check_password(new, repeated)
    user.password_hash = hash_password(new)
    revoke_all(session, user_id)
    session.commit()


def set_disabled(session: Session, *, name: str, disabled: bool, by: int) -> User:
    """Disable or enable a user; disabling ends every session they have."""
    user = _by_name(session, name)
    if user is None or user.password_hash is None:
        raise LookupError(f"There is no user called '{name}'.")
    if user.id == by and disabled:
        raise AccountError("You cannot disable your own account: ask another admin.")
    user.disabled = disabled
    if disabled and user.id is not None:
        revoke_all(session, user.id)
    session.commit()
    return user


def users(session: Session) -> list[User]:
    return list(
        session.scalars(
            select(User).where(col(User.password_hash).is_not(None)).order_by(col(User.name))
        )
    )


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_invite(session: Session, *, by: int, name: str, is_admin: bool, now: datetime) -> str:
    """A new invite for ``name``; returns the token for the link (shown once, never stored).

    A name already in use is refused here, to the admin, who sees every user
    anyway. An earlier invite for the same name that is still waiting stops
    working: the new link replaces a lost one.
    """
    name = check_name(name)
    if _by_name(session, name) is not None:
        raise NameTaken(_TAKEN.format(name=name))
    session.execute(
        Invite.__table__.update()  # type: ignore[attr-defined]
        .where(Invite.__table__.c.name == name)  # type: ignore[attr-defined]
        .where(Invite.__table__.c.used_at.is_(None))  # type: ignore[attr-defined]
        .where(Invite.__table__.c.expires_at > now)  # type: ignore[attr-defined]
        .values(expires_at=now)
    )
    token = secrets.token_urlsafe(32)
    session.add(
        Invite(
            token_hash=_token_hash(token),
            name=name,
            is_admin=is_admin,
            created_by=by,
            created_at=now,
            expires_at=now + timedelta(days=INVITE_DAYS),
        )
    )
    session.commit()
    return token


def open_invite(session: Session, token: str, *, now: datetime) -> Invite:
    """The unused, unexpired invite for ``token``; LookupError otherwise."""
    invite = session.scalar(select(Invite).where(col(Invite.token_hash) == _token_hash(token)))
    if invite is None or invite.used_at is not None or invite.expires_at <= now:
        raise LookupError("This invite link is unknown, used or expired: ask for a new one.")
    if invite.name is None:
        raise LookupError(
            "This invite link was made before invites named the person invited: ask for a new one."
        )
    return invite


def accept_invite(
    session: Session, token: str, *, password: str, repeated: str, now: datetime
) -> User:
    """Create the invited user under the invite's name and use the invite up, in one transaction.

    The person picks only a password: the name is the one the admin chose, so
    nothing here tells anyone which other names exist.
    """
    invite = open_invite(session, token, now=now)
    name = invite.name
    assert name is not None  # open_invite refuses invites without one
    check_password(password, repeated)
    if _by_name(session, name) is not None:  # made meanwhile, by `quizlab user add`
        raise NameTaken(_TAKEN_SINCE.format(name=name))
    # A conditional UPDATE: of two people opening the same link at once, one wins.
    used = session.execute(
        Invite.__table__.update()  # type: ignore[attr-defined]
        .where(Invite.__table__.c.id == invite.id)  # type: ignore[attr-defined]
        .where(Invite.__table__.c.used_at.is_(None))  # type: ignore[attr-defined]
        .values(used_at=now)
    )
    if used.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise LookupError("This invite link is unknown, used or expired: ask for a new one.")
    user = User(
        name=name,
        created_at=now,
        password_hash=hash_password(password),
        is_admin=invite.is_admin,
    )
    session.add(user)
    _commit_new_name(session, _TAKEN_SINCE.format(name=name))
    return user


def _commit_new_name(session: Session, taken: str) -> None:
    """Commit a user with a new name; :class:`NameTaken` (saying ``taken``) if another took it.

    Two invites for one name (two admins at the same moment) may both pass the
    check above; the unique key lets one commit. The other's whole transaction
    rolls back, so their invite stays unused.
    """
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise NameTaken(taken) from None


def now_utc() -> datetime:
    return datetime.now(UTC)

"""Sign-in attempts counted per account and per client address, in the database.

After :data:`ACCOUNT_LIMIT` failures for one name, or :data:`ADDRESS_LIMIT`
from one address, within :data:`WINDOW` seconds, further attempts are refused
(429) without checking the password, until the oldest failure leaves the
window. Unknown names count like real ones, so the limit tells nothing about
which names exist. A success clears the name's count.

The counts are rows of ``login_failure``, so every web replica enforces the
same limit and a restart forgets nothing. An attempt is written down, against
its name *and* its address, *before* its password is checked, and withdrawn
if it is refused or succeeds: a burst of simultaneous guesses cannot all pass
the check while none has been counted yet, so at most the limit's worth are
ever checked (40 wrong sign-ins at once from one address once got 34 checks
against a limit of 20, when the address was counted after the check).

The route makes the attempt inside a password-check slot
(:func:`app.accounts.passwords.gated`), so each process has at most
``MAX_CONCURRENT`` attempts in flight: a class behind one NAT signing in
together is served a few at a time, each success withdrawn before the next
attempt counts, and is not locked out by its own sign-ins.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.storage.models import KEY_LENGTH, LoginFailure

WINDOW = 15 * 60.0
ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt, counted against its name until :meth:`LoginLimiter.succeeded`."""

    name: str
    address: str
    rows: tuple[int, int]  # this attempt's rows, against the name and the address
    wait: float  # seconds until an attempt is allowed; 0 when this one may go ahead


class LoginLimiter:
    def __init__(
        self,
        *,
        window: float = WINDOW,
        account_limit: int = ACCOUNT_LIMIT,
        address_limit: int = ADDRESS_LIMIT,
    ) -> None:
        self.window = window
        self.limits = {"account": account_limit, "address": address_limit}

    def attempt(
        self, session: Session, *, name: str, address: str, now: datetime | None = None
    ) -> Attempt:
        """Count an attempt on ``name`` from ``address``, as a failure until it succeeds.

        If either count is at its limit, the attempt is withdrawn at once
        (refused attempts do not lengthen the wait) and :attr:`Attempt.wait`
        says how long until the oldest failure that blocks it leaves the window.
        """
        now = datetime.now(UTC) if now is None else now
        horizon = now - timedelta(seconds=self.window)
        name, address = name[:KEY_LENGTH], address[:KEY_LENGTH]
        session.execute(delete(LoginFailure).where(col(LoginFailure.at) <= horizon))
        name_row = LoginFailure(scope="account", key=name, at=now)
        address_row = LoginFailure(scope="address", key=address, at=now)
        session.add_all([name_row, address_row])
        session.commit()
        assert name_row.id is not None and address_row.id is not None
        rows = (name_row.id, address_row.id)
        # Each count includes this attempt's own row, so it may reach limit + 1.
        wait = max(
            self._wait(session, "account", name, horizon, allowed=self.limits["account"] + 1),
            self._wait(session, "address", address, horizon, allowed=self.limits["address"] + 1),
        )
        if wait > 0:
            self._withdraw(session, rows)
        return Attempt(name=name, address=address, rows=rows, wait=wait)

    def _wait(
        self, session: Session, scope: str, key: str, horizon: datetime, *, allowed: int
    ) -> float:
        """Seconds until fewer than ``allowed`` rows for the key are inside the window."""
        # Newest first: the one at index allowed - 1 must leave the window first.
        recent = session.scalars(
            select(col(LoginFailure.at))
            .where(col(LoginFailure.scope) == scope, col(LoginFailure.key) == key)
            .where(col(LoginFailure.at) > horizon)
            .order_by(col(LoginFailure.at).desc())
            .limit(allowed)
        ).all()
        if len(recent) < allowed:
            return 0.0
        return (recent[allowed - 1] - horizon).total_seconds()

    def failed(self, session: Session, attempt: Attempt) -> None:
        """The password was wrong: both of the attempt's rows stay, as failures."""

    def succeeded(self, session: Session, attempt: Attempt) -> None:
        """The password was right: forget the name's failures, and this attempt's address row."""
        session.execute(
            delete(LoginFailure).where(
                col(LoginFailure.scope) == "account", col(LoginFailure.key) == attempt.name
            )
        )
        self._withdraw(session, attempt.rows)

    @staticmethod
    def _withdraw(session: Session, rows: tuple[int, int]) -> None:
        session.execute(delete(LoginFailure).where(col(LoginFailure.id).in_(rows)))
        session.commit()

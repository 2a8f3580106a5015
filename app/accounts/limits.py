"""Sign-in attempts counted per account and per client address, in the database.

After :data:`ACCOUNT_LIMIT` failures for one name, or :data:`ADDRESS_LIMIT`
from one address, within :data:`WINDOW` seconds, further attempts are refused
(429) without checking the password, until the oldest failure leaves the
window. Unknown names count like real ones, so the limit tells nothing about
which names exist. A success clears the name's count.

The counts are rows of ``login_failure``, so every web replica enforces the
same limit and a restart forgets nothing. An attempt on a name is written
down *before* its password is checked, and withdrawn if it is refused or
succeeds: a burst of simultaneous guesses at one account cannot all pass the
check while none has been counted yet, so at most the account limit's worth
are ever checked. An address's count holds failures only, written after the
check: a class behind one NAT signing in at once is not locked out by its own
sign-ins still in flight.
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
    name_row: int
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
        row = LoginFailure(scope="account", key=name, at=now)
        session.add(row)
        session.commit()
        name_row = row.id
        assert name_row is not None
        # The name's count includes this attempt's own row, so it may reach limit + 1;
        # the address's holds earlier failures only.
        wait = max(
            self._wait(session, "account", name, horizon, allowed=self.limits["account"] + 1),
            self._wait(session, "address", address, horizon, allowed=self.limits["address"]),
        )
        if wait > 0:
            self._withdraw(session, name_row)
        return Attempt(name=name, address=address, name_row=name_row, wait=wait)

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

    def failed(self, session: Session, attempt: Attempt, now: datetime | None = None) -> None:
        """The password was wrong: the name's row stays, and the address gets one."""
        at = datetime.now(UTC) if now is None else now
        session.add(LoginFailure(scope="address", key=attempt.address, at=at))
        session.commit()

    def succeeded(self, session: Session, attempt: Attempt) -> None:
        """The password was right: forget the name's failures, this attempt among them."""
        session.execute(
            delete(LoginFailure).where(
                col(LoginFailure.scope) == "account", col(LoginFailure.key) == attempt.name
            )
        )
        session.commit()

    @staticmethod
    def _withdraw(session: Session, row: int) -> None:
        session.execute(delete(LoginFailure).where(col(LoginFailure.id) == row))
        session.commit()

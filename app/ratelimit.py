"""Sign-in attempts counted per account and per client address, in the database.

After :data:`ACCOUNT_LIMIT` failures for one name, or :data:`ADDRESS_LIMIT`
from one address, within :data:`WINDOW` seconds, further attempts are refused
(429) without checking the password, until the oldest failure leaves the
window. Unknown names count like real ones, so the limit tells nothing about
which names exist. A success clears the name's count.

The counts are rows of ``login_failure``, so every web replica enforces the
same limit and a restart forgets nothing. An attempt is written down *before*
its password is checked, and withdrawn if it is refused or succeeds: a burst
of simultaneous guesses therefore cannot all pass the check while none has
been counted yet. At most the limit's worth of guesses are ever checked.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.models import KEY_LENGTH, LoginFailure

WINDOW = 15 * 60.0
ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt, counted; :meth:`LoginLimiter.succeeded` withdraws it."""

    name: str
    address_row: int
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
        """Count an attempt for ``name`` from ``address``, as a failure until it succeeds.

        If either count is over its limit, the attempt is withdrawn at once
        (refused attempts do not lengthen the wait) and :attr:`Attempt.wait`
        says how long until the oldest failure that blocks it leaves the window.
        """
        now = datetime.now(UTC) if now is None else now
        horizon = now - timedelta(seconds=self.window)
        keys = {"account": name[:KEY_LENGTH], "address": address[:KEY_LENGTH]}
        session.execute(delete(LoginFailure).where(col(LoginFailure.at) <= horizon))
        rows = {scope: LoginFailure(scope=scope, key=key, at=now) for scope, key in keys.items()}
        session.add_all(rows.values())
        session.commit()
        ids = {scope: row.id for scope, row in rows.items()}

        wait = 0.0
        for scope, key in keys.items():
            limit = self.limits[scope]
            # Newest first, this attempt's own row among them: the one at index
            # `limit` is the failure whose expiry brings the others under the limit.
            recent = session.scalars(
                select(col(LoginFailure.at))
                .where(col(LoginFailure.scope) == scope, col(LoginFailure.key) == key)
                .where(col(LoginFailure.at) > horizon)
                .order_by(col(LoginFailure.at).desc())
                .limit(limit + 1)
            ).all()
            if len(recent) > limit:
                wait = max(wait, (recent[limit] - horizon).total_seconds())
        if wait > 0:
            self._withdraw(session, list(ids.values()))
        address_row = ids["address"]
        assert address_row is not None
        return Attempt(name=keys["account"], address_row=address_row, wait=wait)

    def succeeded(self, session: Session, attempt: Attempt) -> None:
        """The password was right: forget the name's failures and this attempt."""
        session.execute(
            delete(LoginFailure).where(
                col(LoginFailure.scope) == "account", col(LoginFailure.key) == attempt.name
            )
        )
        self._withdraw(session, [attempt.address_row])

    @staticmethod
    def _withdraw(session: Session, ids: list[int | None]) -> None:
        session.execute(delete(LoginFailure).where(col(LoginFailure.id).in_(ids)))
        session.commit()

"""Sign-in attempts counted per name and address, per address, and per name, in the database.

Three counts, each of failures within :data:`WINDOW` seconds:

- a name tried from one address (:data:`ACCOUNT_LIMIT`, 5): a guesser is
  stopped at the name it guesses, from where it guesses, while the owner,
  signing in from their own device, is not locked out by someone else's
  guesses;
- an address, whatever the names (:data:`ADDRESS_LIMIT`, 20);
- a name, from every address (:data:`NAME_LIMIT`, 100): the bound on a
  guesser spread over many addresses. Reaching it locks the name for
  everyone, but takes failures from at least five addresses: the trade-off
  docs/security.md describes.

Past a limit, attempts are refused (429) without checking the password, until
the oldest failure that blocks them leaves the window. Unknown names count
like real ones, so the limit tells nothing about which names exist. A
success clears the name's failures from that address.

The counts are rows of ``login_failure``, so every web replica enforces the
same limits and a restart forgets nothing. An attempt is written down, in all
three counts, *before* its password is checked, and withdrawn if it is
refused or succeeds: a burst of simultaneous guesses cannot all pass the
check while none has been counted yet, so at most the limit's worth are ever
checked (40 wrong sign-ins at once from one address once got 34 checks
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
ACCOUNT_LIMIT = 5  # one name from one address
ADDRESS_LIMIT = 20  # one address, any names
NAME_LIMIT = 100  # one name, from every address
# The counts, each keyed by what its scope names (login_failure.scope is 8 characters).
SCOPES = ("account", "address", "name")


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt, counted as a failure until :meth:`LoginLimiter.succeeded`."""

    keys: dict[str, str]  # the key of each scope
    rows: tuple[int, ...]  # this attempt's rows, one per scope
    wait: float  # seconds until an attempt is allowed; 0 when this one may go ahead


class LoginLimiter:
    def __init__(
        self,
        *,
        window: float = WINDOW,
        account_limit: int = ACCOUNT_LIMIT,
        address_limit: int = ADDRESS_LIMIT,
        name_limit: int = NAME_LIMIT,
    ) -> None:
        self.window = window
        self.limits = {"account": account_limit, "address": address_limit, "name": name_limit}

    def attempt(
        self, session: Session, *, name: str, address: str, now: datetime | None = None
    ) -> Attempt:
        """Count an attempt on ``name`` from ``address``, as a failure until it succeeds.

        If any count is at its limit, the attempt is withdrawn at once
        (refused attempts do not lengthen the wait) and :attr:`Attempt.wait`
        says how long until the oldest failure that blocks it leaves the window.
        """
        now = datetime.now(UTC) if now is None else now
        horizon = now - timedelta(seconds=self.window)
        keys = {
            "account": f"{name}\n{address}"[:KEY_LENGTH],
            "address": address[:KEY_LENGTH],
            "name": name[:KEY_LENGTH],
        }
        session.execute(delete(LoginFailure).where(col(LoginFailure.at) <= horizon))
        added = [LoginFailure(scope=scope, key=keys[scope], at=now) for scope in SCOPES]
        session.add_all(added)
        session.commit()
        rows = tuple(row.id for row in added if row.id is not None)
        # Each count includes this attempt's own row, so it may reach limit + 1.
        wait = max(
            self._wait(session, scope, keys[scope], horizon, allowed=self.limits[scope] + 1)
            for scope in SCOPES
        )
        if wait > 0:
            self._withdraw(session, rows)
        return Attempt(keys=keys, rows=rows, wait=wait)

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
        """The password was wrong: the attempt's rows stay, as failures."""

    def succeeded(self, session: Session, attempt: Attempt) -> None:
        """The password was right: forget the name's failures from this address, and the attempt."""
        session.execute(
            delete(LoginFailure).where(
                col(LoginFailure.scope) == "account",
                col(LoginFailure.key) == attempt.keys["account"],
            )
        )
        self._withdraw(session, attempt.rows)

    @staticmethod
    def _withdraw(session: Session, rows: tuple[int, ...]) -> None:
        session.execute(delete(LoginFailure).where(col(LoginFailure.id).in_(rows)))
        session.commit()

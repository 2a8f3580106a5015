"""Every dependency the routes take, as ``XDep = Annotated[X, Depends(get_x)]``.

The look-ups are ``async def`` on purpose: FastAPI runs a plain ``def``
dependency in its thread pool, which costs more than these attribute
look-ups themselves. The database session is a plain ``def``: opening and
closing it does I/O, and a handler that uses it is a ``def`` too, so the
session stays on that one worker thread. The request's session is committed
by the handler that changes something (app/storage's transaction rule).
"""

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from app.accounts.sessions import Account
from app.content.card import Card
from app.content.library import Library, Snapshot
from app.live.results import LiveResults
from app.practice.activity import Learner
from app.practice.scheduling import Scheduler
from app.settings import Settings
from app.storage.database import Database
from app.web.middleware.auth import ACCOUNT_KEY
from app.web.render import wants_fragment


async def get_snapshot(request: Request) -> Snapshot:
    # One snapshot per request, so a reload mid-request cannot mix versions.
    library: Library = request.app.state.library
    return library.snapshot


async def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request, so the route can answer with a fragment."""
    return wants_fragment(request)


SnapshotDep = Annotated[Snapshot, Depends(get_snapshot)]
HtmxDep = Annotated[bool, Depends(is_htmx)]


async def get_card(card_id: str, snapshot: SnapshotDep) -> Card:
    card = snapshot.cards.get(card_id)
    if card is None and snapshot.reloading:
        # An author previewing a card that has not passed the check yet.
        card = snapshot.drafts.get(card_id)
    if card is None:
        raise HTTPException(404, f"There is no card with the id '{card_id}'.")
    return card


CardDep = Annotated[Card, Depends(get_card)]


async def get_database(request: Request) -> Database:
    database: Database = request.app.state.db
    return database


def get_session(database: Annotated[Database, Depends(get_database)]) -> Iterator[Session]:
    # A sync dependency: FastAPI opens and closes it in its thread pool.
    with database.session() as session:
        yield session


async def get_learner(
    request: Request, database: Annotated[Database, Depends(get_database)]
) -> Learner:
    """Whose progress a request reads and writes: the one place that decides it.

    In accounts mode, the account app.web.middleware.auth checked for this request (the
    middleware lets no signed-out request reach a route that needs a learner);
    otherwise the local user, whose id start-up looked up, so this does no I/O.
    """
    settings: Settings = request.app.state.settings
    if settings.auth == "accounts":
        account: Account | None = getattr(request.state, ACCOUNT_KEY, None)
        if account is None:
            raise HTTPException(401, "Sign in first: your session has ended.")
        return Learner(account.id, settings.zone)
    return Learner(database.local_user_id, settings.zone)


async def get_scheduler(request: Request) -> Scheduler:
    settings: Settings = request.app.state.settings
    return Scheduler(desired_retention=settings.desired_retention)


DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(get_session)]
LearnerDep = Annotated[Learner, Depends(get_learner)]
SchedulerDep = Annotated[Scheduler, Depends(get_scheduler)]


async def get_live(request: Request) -> LiveResults:
    live: LiveResults = request.app.state.live
    return live


LiveDep = Annotated[LiveResults, Depends(get_live)]


async def get_account(request: Request) -> Account:
    account: Account | None = getattr(request.state, ACCOUNT_KEY, None)
    if account is None:
        raise HTTPException(401, "Sign in first: your session has ended.")
    return account


async def get_admin(account: Annotated[Account, Depends(get_account)]) -> Account:
    if not account.is_admin:
        raise HTTPException(403, "Only an admin can manage users and invites.")
    return account


AccountDep = Annotated[Account, Depends(get_account)]
AdminDep = Annotated[Account, Depends(get_admin)]

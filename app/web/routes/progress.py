"""The learner's data: the database session and learner dependencies, and the JSON download."""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session

from app.accounts.users import Account
from app.practice import progress
from app.practice.activity import Learner
from app.practice.scheduling import Scheduler
from app.settings import Settings
from app.storage.database import Database
from app.web.middleware.auth import ACCOUNT_KEY

router = APIRouter()


# The look-ups are async: FastAPI would run a plain def dependency in its thread
# pool, which costs more than the look-up. The session is sync: closing it does I/O.
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


@router.get("/progress", name="progress")
def download(database: DatabaseDep, learner: LearnerDep) -> StreamingResponse:
    """All of the learner's progress as one JSON file (``quizlab progress import`` reads it)."""
    now = datetime.now(UTC)

    def chunks() -> Iterator[str]:
        # Its own session: the response streams after the request's dependencies close.
        with database.session() as session:
            yield from progress.export(session, learner.user_id, now=now)

    filename = f"quizlab-progress-{now:%Y-%m-%d}.json"
    return StreamingResponse(
        chunks(),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )

"""The learner's data as one JSON download."""

from collections.abc import Iterator
from datetime import UTC, datetime

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from app.practice import progress
from app.web.deps import DatabaseDep, LearnerDep

router = APIRouter()


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

"""The stats page: activity, retention, accuracy by deck and part, due forecast, streak."""

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app import stats
from app.routes.deps import SnapshotDep
from app.routes.progress import LearnerDep, SessionDep
from app.templating import templates

router = APIRouter()


@router.get("/stats", response_class=HTMLResponse, name="stats")
def stats_page(
    request: Request, session: SessionDep, learner: LearnerDep, snapshot: SnapshotDep
) -> HTMLResponse:
    found = stats.build(session, learner, snapshot=snapshot, now=datetime.now(UTC))
    return templates.TemplateResponse(request, "stats.html", {"stats": found})

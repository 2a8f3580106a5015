"""The stats page: activity, retention, accuracy by deck and part, due forecast, streak.

Its "Your data" section downloads the learner's progress (``GET /progress``)
and imports a progress file (``POST /stats/import``), shown here again with
what the import added or what is wrong with the file.
"""

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, File, Request, UploadFile
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.content.library import Snapshot
from app.practice import interview, progress, stats
from app.practice.activity import Learner
from app.web.deps import LearnerDep, SchedulerDep, SessionDep, SnapshotDep
from app.web.middleware.csrf import MAX_UPLOAD_BYTES
from app.web.responses import UNSAFE
from app.web.templating import templates

router = APIRouter()

INTERVIEWS_SHOWN = 50  # rounds on the page, newest first; the chart draws the last 30 graded


def _page(
    request: Request,
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    *,
    imported: str | None = None,
    import_error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    found = stats.build(session, learner, snapshot=snapshot, now=datetime.now(UTC))
    context = {
        "stats": found,
        "imported": imported,
        "import_error": import_error,
        "interviews": interview.past_rounds(session, learner, limit=INTERVIEWS_SHOWN),
        "zone": learner.zone,
    }
    return templates.TemplateResponse(request, "stats.html", context, status_code=status_code)


@router.get("/stats", response_class=HTMLResponse, name="stats")
def stats_page(
    request: Request, session: SessionDep, learner: LearnerDep, snapshot: SnapshotDep
) -> HTMLResponse:
    return _page(request, session, learner, snapshot)


@router.post("/stats/import", response_class=HTMLResponse, name="import_progress", responses=UNSAFE)
def import_progress(
    request: Request,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    scheduler: SchedulerDep,
    file: Annotated[UploadFile | None, File()] = None,
) -> HTMLResponse:
    """Add what a progress file holds that is not here yet; a bad file changes nothing."""
    # A form sent without choosing a file has a part with an empty name and body.
    data = file.file.read(MAX_UPLOAD_BYTES + 1) if file is not None else b""
    name = file.filename if file is not None and file.filename else "the file"
    error, status = None, 200
    if not data:
        error, status = "Choose a file first: one that “Download my progress” wrote.", 422
    elif len(data) > MAX_UPLOAD_BYTES:
        limit = MAX_UPLOAD_BYTES // 1_000_000
        error = f"{name} is larger than {limit} MB: use `quizlab progress import` on the server."
        status = 413
    else:
        try:
            parsed = progress.parse(data)
        except progress.ProgressFileError as exc:
            error, status = f"{name}: {exc}. Nothing was imported.", 422
    if error is not None:
        return _page(request, session, learner, snapshot, import_error=error, status_code=status)
    imported = progress.import_file(
        session, learner, parsed, scheduler=scheduler, snapshot=snapshot
    )
    return _page(request, session, learner, snapshot, imported=f"{name}: {imported}.")

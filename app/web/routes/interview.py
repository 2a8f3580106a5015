"""Mock interviews: start a round, answer under a clock, grade it, read its report.

A round has one address, ``/interview/{uid}``, which shows what the round
needs next: the question being asked, the grading form once answering is
over, or the report once graded. Every POST redirects back there
(post/redirect/get), so a reload never sends anything twice; htmx also saves
the answer a second after typing stops (``/draft``), which answers with the
"saved" line alone. A form the round has moved past (another tab, a second
click, a round already graded) gets the round as it is now, with a notice,
and 409; nothing is stored twice.
"""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.content.library import Snapshot
from app.practice import deck_names, interview
from app.practice.activity import Learner
from app.practice.errors import InterviewError, RoundConflict
from app.storage.values import storable_text
from app.web.deps import HtmxDep, LearnerDep, SchedulerDep, SessionDep, SnapshotDep
from app.web.errors import status_of
from app.web.fields import StoredText
from app.web.render import render
from app.web.responses import UNSAFE, pages

router = APIRouter()

PAST_SHOWN = 10


def _now() -> datetime:
    return datetime.now(UTC)


def _round_url(request: Request, uid: str) -> str:
    root: str = request.scope.get("root_path", "")
    return root + str(request.app.url_path_for("interview_round", uid=uid))


@router.get("/interview", response_class=HTMLResponse, name="interview", responses=pages(409))
def start_page(
    request: Request, session: SessionDep, learner: LearnerDep, snapshot: SnapshotDep
) -> HTMLResponse:
    return _start_page(request, session, learner, snapshot)


def _start_page(
    request: Request,
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    *,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context = {
        "decks": deck_names(snapshot),
        "lengths": interview.LENGTHS,
        "mixes": {name: label for name, (_, label) in interview.MIXES.items()},
        "past": interview.past_rounds(session, learner, limit=PAST_SHOWN),
        "zone": learner.zone,
        "error": error,
    }
    return render(request, "interview.html", context, status_code=status_code)


class StartFields(BaseModel):
    """The start form as sent; the plan checks the values and names a bad one."""

    source: str = Field("decks", max_length=12)  # "decks" or "weakest"
    deck: list[str] = Field(default_factory=list, max_length=200)
    minutes: str = Field("15", max_length=4)
    mix: str = Field("mixed", max_length=16)


@router.post("/interview", name="interview_start", responses=pages(303, 404, 409) | UNSAFE)
def start(
    request: Request,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    sent: Annotated[StartFields, Form()],
) -> Response:
    weakest = sent.source == "weakest"
    wanted = interview.Request(
        decks=() if weakest else tuple(dict.fromkeys(sent.deck)),
        weakest=weakest,
        mix=sent.mix,
        minutes=_small_number(sent.minutes) or 0,
    )
    try:
        uid = interview.start(session, learner, snapshot, wanted, now=_now())
    except InterviewError as error:
        return _start_page(
            request, session, learner, snapshot, error=str(error), status_code=status_of(error)
        )
    return RedirectResponse(_round_url(request, uid), status_code=303)


@router.get(
    "/interview/{uid}",
    response_class=HTMLResponse,
    name="interview_round",
    responses=pages(404, 409),
)
def round_page(
    request: Request, uid: str, session: SessionDep, learner: LearnerDep, snapshot: SnapshotDep
) -> HTMLResponse:
    return _round_page(request, session, learner, snapshot, uid)


def _round_page(
    request: Request,
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    uid: str,
    *,
    notice: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """The page the round needs now: its question, its grading form or its report."""
    now = _now()
    found = interview.load(session, learner, snapshot, uid)
    context: dict[str, Any] = {"round": found, "now": now, "notice": notice, "zone": learner.zone}
    if found.state == "answering":
        page = "interview_question.html"
        context["question"] = found.current
        context["lead"] = _lead(found, found.current)
    elif found.state == "grading":
        page = "interview_grade.html"
        context["questions"] = interview.gradable(found)
        context["coverage_levels"] = interview.COVERAGE_LEVELS
        context["penalty"] = interview.RED_FLAG_PENALTY
    else:
        page = "interview_report.html"
        context["report"] = interview.build_report(session, learner, snapshot, found)
    return render(request, page, context, status_code=status_code)


def _lead(found: interview.Round, question: interview.Question | None) -> interview.Question | None:
    """A follow-up's main question, shown above it as context."""
    if question is None or not question.follow_up:
        return None
    return next(
        (q for q in found.questions if q.card_id == question.card_id and not q.follow_up), None
    )


class AnswerFields(BaseModel):
    """An answer as sent: the question it answers, the text, and the button pressed."""

    position: str = Field("", max_length=6)
    # No cap here: the domain refuses an answer over the limit with a message that
    # names it (the CSRF middleware caps the whole form at 1 MB).
    answer: StoredText = ""
    action: str = Field("save", max_length=8)  # save, next or finish


AnswerDep = Annotated[AnswerFields, Form()]


def _small_number(text: str) -> int | None:
    """ASCII digits below 10,000 as an int, else None.

    ``str.isdigit`` accepts '²' and other digits ``int()`` refuses, and a long
    number would overflow the database's integer columns.
    """
    if text.isascii() and text.isdigit() and len(text) <= 4:
        return int(text)
    return None


def _position(sent: AnswerFields) -> int:
    position = _small_number(sent.position)
    if position is None:
        raise InterviewError(f"position must be a question number, not '{sent.position}'.")
    return position


@router.post(
    "/interview/{uid}/draft",
    response_class=HTMLResponse,
    name="interview_draft",
    responses=pages(404, 409) | UNSAFE,
)
def save_draft(
    request: Request,
    uid: str,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    htmx: HtmxDep,
    sent: AnswerDep,
) -> Response:
    """Keep what has been typed so far: htmx sends it a second after typing stops."""
    try:
        saved = interview.save(
            session, learner, snapshot, uid, position=_position(sent), text=sent.answer, now=_now()
        )
    except InterviewError as error:
        if not htmx:
            raise
        refused = {"saved_at": None, "error": str(error), "zone": learner.zone}
        return render(request, "_interview_saved.html", refused, status_code=status_of(error))
    if not htmx:
        return RedirectResponse(_round_url(request, uid), status_code=303)
    context: dict[str, Any] = {"saved_at": saved.at, "error": None, "zone": learner.zone}
    return render(request, "_interview_saved.html", context)


@router.post(
    "/interview/{uid}/answer", name="interview_answer", responses=pages(303, 404, 409) | UNSAFE
)
def answer(
    request: Request,
    uid: str,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    sent: AnswerDep,
) -> Response:
    """Save the answer; with Next or End, also move the round on. Then back to the round."""
    if sent.action not in ("save", "next", "finish"):
        raise InterviewError(f"action must be save, next or finish, not '{sent.action}'.")
    position, now = _position(sent), _now()
    try:
        if sent.action == "save":
            interview.save(
                session, learner, snapshot, uid, position=position, text=sent.answer, now=now
            )
        else:
            interview.advance(
                session,
                learner,
                snapshot,
                uid,
                position=position,
                text=sent.answer,
                now=now,
                finish=sent.action == "finish",
            )
    except RoundConflict as conflict:
        return _round_page(
            request, session, learner, snapshot, uid, notice=str(conflict), status_code=409
        )
    return RedirectResponse(_round_url(request, uid), status_code=303)


async def grading_marks(request: Request) -> dict[int, interview.Marks]:
    """The grading form's ticks by question: ``points-N``, ``flags-N`` and ``coverage-N``.

    Field names carry the question's position, so they cannot be a fixed model.
    """
    form = await request.form()
    points: dict[int, set[int]] = {}
    flags: dict[int, set[str]] = {}
    coverage: dict[int, int] = {}
    for name, value in form.multi_items():
        kind, _, number = name.partition("-")
        position = _small_number(number)
        if kind not in ("points", "flags", "coverage") or position is None:
            continue
        text = str(value)
        if kind == "flags":
            try:
                flags.setdefault(position, set()).add(storable_text(text[:80]))
            except ValueError as exc:
                raise InterviewError(f"{name}: {exc}.") from None
            continue
        mark = _small_number(text)
        if mark is None:
            raise InterviewError(f"{name} must be a number, not '{text[:20]}'.")
        if kind == "points":
            points.setdefault(position, set()).add(mark)
        else:
            coverage[position] = mark
    return {
        position: interview.Marks(
            frozenset(points.get(position, ())),
            frozenset(flags.get(position, ())),
            coverage.get(position),
        )
        for position in {*points, *flags, *coverage}
    }


@router.post(
    "/interview/{uid}/grade", name="interview_grade", responses=pages(303, 404, 409) | UNSAFE
)
def grade(
    request: Request,
    uid: str,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    scheduler: SchedulerDep,
    marks: Annotated[dict[int, interview.Marks], Depends(grading_marks)],
) -> Response:
    """Record the grades (once: a second submission counts nothing), then show the report."""
    try:
        interview.grade_round(
            session, learner, snapshot, uid, marks, scheduler=scheduler, now=_now()
        )
    except InterviewError as error:
        return _round_page(
            request,
            session,
            learner,
            snapshot,
            uid,
            notice=str(error),
            status_code=status_of(error),
        )
    return RedirectResponse(_round_url(request, uid), status_code=303)

"""The review page: the next due item, type, reveal, grade, and on to the next without a reload.

Routes are sync ``def``: their database work runs in FastAPI's thread pool.
A grade that cannot be recorded (unknown item, a replayed or stale form, a
rating outside 1-4) answers 4xx with the queue as it now is and a notice that
says why nothing was stored.
"""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlmodel import col

from app import review
from app.activity import Learner
from app.library import Snapshot
from app.livecheck import LiveResults, demo_views
from app.models import ReviewLog
from app.review import Due, Graded, Item, ReviewConflict, ReviewError, UnknownItem
from app.routes.deps import HtmxDep, SnapshotDep
from app.routes.live import LiveDep
from app.routes.progress import LearnerDep, SchedulerDep, SessionDep
from app.scheduling import Rating
from app.settings import Settings
from app.templating import templates

router = APIRouter()

Mode = Literal["due", "practice"]


class BadForm(ReviewError):
    """A field the review form always sends is missing or malformed."""


def _deck(snapshot: Snapshot, deck: str) -> str | None:
    if not deck:
        return None
    if deck not in review.deck_names(snapshot):
        raise HTTPException(404, f"There is no deck called '{deck}'.")
    return deck


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _queue(
    request: Request,
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    live: LiveResults,
    *,
    deck: str | None,
    mode: Mode,
    after: str,
    now: datetime,
) -> dict[str, Any]:
    """The context of the review region: what comes next in this mode and deck."""
    settings = _settings(request)
    status: review.QueueStatus | None = None  # practice shows no counts
    if mode == "practice":
        due = review.next_practice(
            session, learner, snapshot=snapshot, now=now, after=after, deck=deck
        )
    else:
        due, status = review.next_item(
            session,
            learner,
            snapshot=snapshot,
            now=now,
            new_per_day=settings.new_items_per_day,
            deck=deck,
        )
    return _item_context(due, live, now=now) | {
        "mode": mode,
        "deck": deck,
        "decks": review.deck_names(snapshot),
        "status": status,
        "next_due": (
            review.describe_when(status.next_due, now, learner)
            if status is not None and status.next_due
            else None
        ),
        "recorded": None,
        "error": None,
        "oob": False,
    }


def _item_context(
    due: Due | None,
    live: LiveResults,
    *,
    now: datetime,
    revealed: bool = False,
    typed_answer: str = "",
    token: str | None = None,
    shown_ms: int | None = None,
) -> dict[str, Any]:
    card = due.item.card if due else None
    return {
        "due": due,
        "card": card,
        "measurements": live.measurements(card) if card else {},
        "demo_views": demo_views(live, card) if card else {},
        "revealed": revealed,
        "typed_answer": typed_answer,
        "token": token or review.new_token(),
        "shown_ms": shown_ms if shown_ms is not None else int(now.timestamp() * 1000),
        "intervals": None,
    }


def _render(
    request: Request, htmx: bool, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    if htmx:
        context["oob"] = True
        return templates.TemplateResponse(request, "_review.html", context, status_code=status_code)
    return templates.TemplateResponse(request, "review.html", context, status_code=status_code)


def _recorded(
    session: Session, learner: Learner, snapshot: Snapshot, token: str, now: datetime
) -> Graded | None:
    """The review a plain (no-JavaScript) grade form recorded, to confirm after its redirect."""
    if not review.is_token(token):
        return None
    row = session.scalar(
        select(ReviewLog).where(
            col(ReviewLog.user_id) == learner.user_id, col(ReviewLog.uid) == token
        )
    )
    if row is None:
        return None
    try:
        item = review.find_item(snapshot, review.item_key(row.card_id, row.follow_up))
    except UnknownItem:
        return None
    schedule = (
        None if row.practice else review.current_schedule(session, learner.user_id, item, now)
    )
    return Graded(item, Rating(row.rating), row.practice, schedule)


@router.get("/review", response_class=HTMLResponse, name="review")
def review_page(
    request: Request,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    htmx: HtmxDep,
    deck: Annotated[str, Query(max_length=80)] = "",
    mode: Annotated[Mode, Query()] = "due",
    after: Annotated[str, Query(max_length=200)] = "",
    recorded: Annotated[str, Query(max_length=64)] = "",
) -> HTMLResponse:
    now = datetime.now(UTC)
    context = _queue(
        request,
        session,
        learner,
        snapshot,
        live,
        deck=_deck(snapshot, deck),
        mode=mode,
        after=after,
        now=now,
    )
    if recorded:
        context["recorded"] = _recorded(session, learner, snapshot, recorded, now)
    return _render(request, htmx, context)


class ReviewFields(BaseModel):
    """The fields the reveal and grade forms send, as sent: :class:`_Form` checks them.

    Plain strings with length caps, so a forged value gets a message that says
    what is wrong with it instead of a generic validation error.
    """

    item: str = Field("", max_length=200)
    version: str = Field("", max_length=12)
    token: str = Field("", max_length=64)
    shown: str = Field("", max_length=20)  # when the item was shown, ms since the epoch
    answer: str = Field("", max_length=review.MAX_ANSWER_LENGTH)
    deck: str = Field("", max_length=80)
    mode: str = Field("due", max_length=12)
    cursor: str = Field("", max_length=200)  # practice: the item the queue continues after
    rating: str = Field("", max_length=12)  # the grade form only


FieldsDep = Annotated[ReviewFields, Form()]


class _Form:
    """The fields every review form sends, checked; errors say which field and why."""

    def __init__(self, snapshot: Snapshot, sent: ReviewFields) -> None:
        if sent.mode not in ("due", "practice"):
            raise BadForm(f"mode must be 'due' or 'practice', not '{sent.mode}'.")
        self.mode: Mode = "practice" if sent.mode == "practice" else "due"
        if not sent.version.isdigit():
            raise BadForm(f"version must be a whole number, not '{sent.version}': reload the page.")
        self.version = int(sent.version)
        if not review.is_token(sent.token):
            raise BadForm("This form has no valid review token: reload the review page.")
        self.token = sent.token
        self.shown_ms = int(sent.shown) if sent.shown.isdigit() else None
        self.item: Item = review.find_item(snapshot, sent.item)

    def duration_ms(self, now: datetime) -> int:
        if self.shown_ms is None:
            return 0
        return max(0, int(now.timestamp() * 1000) - self.shown_ms)


def _status_of(error: ReviewError) -> int:
    if isinstance(error, UnknownItem):
        return 404
    if isinstance(error, ReviewConflict):
        return 409
    return 422


def _refused(
    request: Request,
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    live: LiveResults,
    htmx: bool,
    *,
    sent: ReviewFields,
    error: ReviewError,
    now: datetime,
) -> HTMLResponse:
    """The queue as it is now, with the reason the form was refused; nothing was stored."""
    queue = _queue(
        request,
        session,
        learner,
        snapshot,
        live,
        deck=_deck(snapshot, sent.deck),
        mode="practice" if sent.mode == "practice" else "due",
        after=sent.cursor,
        now=now,
    )
    queue["error"] = str(error)
    return _render(request, htmx, queue, status_code=_status_of(error))


@router.post("/review/reveal", response_class=HTMLResponse, name="review_reveal")
def reveal(
    request: Request,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    scheduler: SchedulerDep,
    htmx: HtmxDep,
    sent: FieldsDep,
) -> HTMLResponse:
    now = datetime.now(UTC)
    chosen = _deck(snapshot, sent.deck)
    try:
        form = _Form(snapshot, sent)
        review.check_form(
            session,
            learner.user_id,
            form.item,
            version=form.version,
            token=form.token,
            practice=form.mode == "practice",
        )
    except ReviewError as error:
        return _refused(
            request, session, learner, snapshot, live, htmx, sent=sent, error=error, now=now
        )
    schedule = review.current_schedule(session, learner.user_id, form.item, now)
    due = Due(form.item, schedule, is_new=schedule.version == 0, cursor=sent.cursor)
    context = _item_context(
        due,
        live,
        now=now,
        revealed=True,
        typed_answer=sent.answer,
        token=form.token,
        shown_ms=form.shown_ms,
    )
    if form.mode == "due":
        context["intervals"] = review.intervals(schedule, form.item, now, scheduler)
    context |= {"mode": form.mode, "deck": chosen}
    if htmx:
        return templates.TemplateResponse(request, "_review_item.html", context)
    full = _queue(
        request, session, learner, snapshot, live, deck=chosen, mode=form.mode, after="", now=now
    )
    return templates.TemplateResponse(request, "review.html", full | context)


@router.post("/review/grade", name="review_grade")
def grade(
    request: Request,
    session: SessionDep,
    learner: LearnerDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    scheduler: SchedulerDep,
    htmx: HtmxDep,
    sent: FieldsDep,
) -> Response:
    now = datetime.now(UTC)
    chosen = _deck(snapshot, sent.deck)
    practice = sent.mode == "practice"
    rating = sent.rating
    try:
        if rating not in ("1", "2", "3", "4"):
            raise BadForm(
                f"Grade with 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy), not '{rating}'; "
                "nothing was recorded."
            )
        form = _Form(snapshot, sent)
        graded: Graded = review.grade(
            session,
            learner,
            item=form.item,
            rating=Rating(int(rating)),
            version=form.version,
            token=form.token,
            now=now,
            scheduler=scheduler,
            answer=sent.answer,
            duration_ms=form.duration_ms(now),
            practice=practice,
        )
    except ReviewError as error:
        session.rollback()
        return _refused(
            request, session, learner, snapshot, live, htmx, sent=sent, error=error, now=now
        )
    after = sent.cursor if practice else ""
    if not htmx:
        # Post/redirect/get: back to the queue, in the same deck and mode, saying
        # what was recorded (the token names the review) as the htmx path does.
        wanted = {
            "deck": sent.deck,
            "mode": "practice" if practice else "",
            "after": after,
            "recorded": form.token,
        }
        query = urlencode({name: value for name, value in wanted.items() if value})
        url = request.scope.get("root_path", "") + request.app.url_path_for("review")
        return RedirectResponse(f"{url}?{query}" if query else url, status_code=303)
    context = _queue(
        request,
        session,
        learner,
        snapshot,
        live,
        deck=chosen,
        mode="practice" if practice else "due",
        after=after,
        now=now,
    )
    context["recorded"] = graded
    return _render(request, htmx, context)

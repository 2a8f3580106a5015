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
from sqlalchemy.orm import Session

from app import practice
from app.content.library import Snapshot
from app.live.results import LiveResults, demo_views
from app.practice import Due, Graded, Item, ReviewError
from app.practice.activity import Learner
from app.practice.scheduling import Rating
from app.settings import Settings
from app.storage.values import MAX_INTEGER, storable_text, whole_number
from app.web.deps import HtmxDep, LearnerDep, LiveDep, SchedulerDep, SessionDep, SnapshotDep
from app.web.errors import status_of
from app.web.render import render
from app.web.responses import UNSAFE, pages
from app.web.templating import templates

router = APIRouter()

Mode = Literal["due", "practice"]
MAX_SHOWN_MS = 10**15  # when a form was shown, in ms: the year 33658 is far enough


class BadForm(ReviewError):
    """A field the review form always sends is missing or malformed."""


def _deck(snapshot: Snapshot, deck: str) -> str | None:
    if not deck:
        return None
    if deck not in practice.deck_names(snapshot):
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
    status: practice.QueueStatus | None = None  # practice shows no counts
    if mode == "practice":
        due = practice.next_practice(
            session, learner, snapshot=snapshot, now=now, after=after, deck=deck
        )
    else:
        due, status = practice.next_item(
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
        "decks": practice.deck_names(snapshot),
        "status": status,
        "next_due": (
            practice.describe_when(status.next_due, now, learner)
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
        "token": token or practice.new_token(),
        "shown_ms": shown_ms if shown_ms is not None else int(now.timestamp() * 1000),
        "intervals": None,
    }


def _render(
    request: Request, htmx: bool, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    context["oob"] = htmx
    return render(request, "review.html", context, fragment="_review.html", status_code=status_code)


@router.get("/review", response_class=HTMLResponse, name="review", responses=pages(404))
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
        context["recorded"] = practice.recorded_review(session, learner, snapshot, recorded, now)
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
    answer: str = Field("", max_length=practice.MAX_ANSWER_LENGTH)
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
        version = whole_number(sent.version)
        if version is None:
            raise BadForm(
                f"version must be a whole number from 0 to {MAX_INTEGER}, "
                f"not '{sent.version}': reload the page."
            )
        self.version = version
        if not practice.is_token(sent.token):
            raise BadForm("This form has no valid review token: reload the review page.")
        self.token = sent.token
        self.shown_ms = whole_number(sent.shown, maximum=MAX_SHOWN_MS) if sent.shown else None
        if sent.shown and self.shown_ms is None:
            raise BadForm(
                f"shown must be milliseconds since 1970 in ASCII digits, not '{sent.shown}': "
                "reload the page."
            )
        try:
            storable_text(sent.answer)
        except ValueError as error:
            raise BadForm(f"answer: {error}.") from None
        self.item: Item = practice.find_item(snapshot, sent.item)

    def duration_ms(self, now: datetime) -> int:
        if self.shown_ms is None:
            return 0
        return max(0, int(now.timestamp() * 1000) - self.shown_ms)


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
    return _render(request, htmx, queue, status_code=status_of(error))


@router.post(
    "/review/reveal",
    response_class=HTMLResponse,
    name="review_reveal",
    responses=pages(404, 409) | UNSAFE,
)
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
        practice.check_form(
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
    schedule = practice.current_schedule(session, learner.user_id, form.item, now)
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
        context["intervals"] = practice.intervals(schedule, form.item, now, scheduler)
    context |= {"mode": form.mode, "deck": chosen}
    if htmx:
        return templates.TemplateResponse(request, "_review_item.html", context)
    full = _queue(
        request, session, learner, snapshot, live, deck=chosen, mode=form.mode, after="", now=now
    )
    return templates.TemplateResponse(request, "review.html", full | context)


@router.post(
    "/review/grade",
    response_class=HTMLResponse,
    name="review_grade",
    responses=pages(303, 404, 409) | UNSAFE,
)
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
    practising = sent.mode == "practice"
    rating = sent.rating
    try:
        if rating not in ("1", "2", "3", "4"):
            raise BadForm(
                f"Grade with 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy), not '{rating}'; "
                "nothing was recorded."
            )
        form = _Form(snapshot, sent)
        graded: Graded = practice.grade(
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
            practice=practising,
        )
    except ReviewError as error:  # grade() rolled back what it had written
        return _refused(
            request, session, learner, snapshot, live, htmx, sent=sent, error=error, now=now
        )
    after = sent.cursor if practising else ""
    if not htmx:
        # Post/redirect/get: back to the queue, in the same deck and mode, saying
        # what was recorded (the token names the review) as the htmx path does.
        wanted = {
            "deck": sent.deck,
            "mode": "practice" if practising else "",
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
        mode="practice" if practising else "due",
        after=after,
        now=now,
    )
    context["recorded"] = graded
    return _render(request, htmx, context)

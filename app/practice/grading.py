"""Recording a grade, safe against double clicks, replays and races.

- the form carries a one-time token that becomes the review's ``uid``; a token
  already in the log is :class:`~app.practice.errors.AlreadyRecorded`;
- it also carries the item's ``version`` when it was shown; the state is
  written with ``UPDATE ... WHERE version = shown`` (or an INSERT that the
  unique key refuses for a new item), so of two grades of one shown item
  exactly one is applied and the other is :class:`~app.practice.errors.StaleItem`;
- the log row, the new state and the activity totals commit together, or not
  at all.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.library import Snapshot
from app.practice import activity
from app.practice.activity import Learner
from app.practice.errors import AlreadyRecorded, ReviewError, StaleItem, UnknownItem
from app.practice.items import Item, find_item, item_key
from app.practice.scheduling import Rating, Schedule, Scheduler, describe_interval
from app.practice.stored import current_schedule, item_row, schedule_columns, schedule_of
from app.storage.models import ReviewItem, ReviewLog

TOKEN_LENGTH = 32
MAX_ANSWER_LENGTH = 20_000  # characters of a typed answer; the forms say so too
MAX_DURATION_MS = 60 * 60 * 1000  # longer than an hour is a tab left open, not thinking time
_SENT_TWICE = "This grade was already recorded (the form was sent twice); it was not counted again."


def new_token() -> str:
    """A one-time token for a review form: it becomes the uid of the review it records."""
    return secrets.token_hex(TOKEN_LENGTH // 2)


def is_token(text: str) -> bool:
    return len(text) == TOKEN_LENGTH and all(c in "0123456789abcdef" for c in text)


@dataclass(frozen=True)
class Graded:
    item: Item
    rating: Rating
    practice: bool
    schedule: Schedule | None  # the new state; None for practice, which changes nothing

    @property
    def back_in(self) -> str | None:
        if self.schedule is None or self.schedule.last_review is None:
            return None
        return describe_interval(self.schedule.due - self.schedule.last_review)


def _check_token(session: Session, user_id: int, token: str) -> None:
    if not is_token(token):
        raise ReviewError("This form has no valid review token: reload the review page.")
    used = session.scalar(
        select(col(ReviewLog.id)).where(
            col(ReviewLog.user_id) == user_id, col(ReviewLog.uid) == token
        )
    )
    if used is not None:
        raise AlreadyRecorded(_SENT_TWICE)


def check_form(
    session: Session, user_id: int, item: Item, *, version: int, token: str, practice: bool
) -> None:
    """Raise when a shown form can no longer be graded: its token is used or its item moved on."""
    _check_token(session, user_id, token)
    if practice:
        return
    row = item_row(session, user_id, item.card.id, item.follow_up_key)
    current = row.version if row is not None else 0
    if current != version:
        raise _stale(item, version, current)


def _stale(item: Item, shown: int, current: int) -> StaleItem:
    return StaleItem(
        f"'{item.card.title}' ({item.part}) was graded since this page was shown "
        f"(review {current} now, {shown} then: another tab, or a second click), "
        "so this grade was not recorded. The next item is below."
    )


def _move_on(
    session: Session,
    user_id: int,
    item: Item,
    *,
    rating: Rating,
    version: int,
    now: datetime,
    scheduler: Scheduler,
) -> Schedule:
    """Write the item's next state, if it is still at ``version``; :class:`StaleItem` if not."""
    row = item_row(session, user_id, item.card.id, item.follow_up_key)
    before = schedule_of(row) if row is not None else Schedule.new(now)
    schedule = scheduler.review(before, rating, now, seed=item.key)
    if row is not None:
        applied = session.execute(
            update(ReviewItem)
            .where(col(ReviewItem.id) == row.id, col(ReviewItem.version) == version)
            .values(**schedule_columns(schedule))
        )
        if applied.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            raise _stale(item, version, version + 1)
        return schedule
    try:
        session.execute(
            insert(ReviewItem).values(
                user_id=user_id,
                card_id=item.card.id,
                follow_up=item.follow_up_key,
                **schedule_columns(schedule),
            )
        )
    except IntegrityError:
        session.rollback()
        raise _stale(item, version, version + 1) from None
    return schedule


def _log(
    session: Session,
    user_id: int,
    item: Item,
    *,
    rating: Rating,
    token: str,
    now: datetime,
    answer: str,
    duration_ms: int,
    practice: bool,
) -> None:
    """Add the review to the log; :class:`AlreadyRecorded` if its token is there already."""
    try:
        session.execute(
            insert(ReviewLog).values(
                uid=token,
                user_id=user_id,
                card_id=item.card.id,
                follow_up=item.follow_up_key,
                rating=int(rating),
                answer=answer,
                duration_ms=max(0, min(duration_ms, MAX_DURATION_MS)),
                reviewed_at=now,
                practice=practice,
            )
        )
    except IntegrityError:
        session.rollback()
        raise AlreadyRecorded(_SENT_TWICE) from None


def record(
    session: Session,
    learner: Learner,
    *,
    item: Item,
    rating: Rating,
    version: int,
    token: str,
    now: datetime,
    scheduler: Scheduler,
    answer: str = "",
    duration_ms: int = 0,
    practice: bool = False,
) -> Graded:
    """Record one review without committing: the caller commits.

    The building block of :func:`grade`, and of grading a mock interview,
    which records several items in one transaction. A refusal rolls back the
    session (everything the transaction wrote) before it is raised.
    """
    user_id = learner.user_id
    try:
        check_form(session, user_id, item, version=version, token=token, practice=practice)
    except ReviewError:
        session.rollback()  # earlier records of the caller's transaction, if any
        raise
    schedule: Schedule | None = None
    if not practice:
        schedule = _move_on(
            session, user_id, item, rating=rating, version=version, now=now, scheduler=scheduler
        )
    _log(
        session,
        user_id,
        item,
        rating=rating,
        token=token,
        now=now,
        answer=answer,
        duration_ms=duration_ms,
        practice=practice,
    )
    activity.count_review(
        session,
        learner,
        card_id=item.card.id,
        follow_up=item.follow_up_key,
        rating=int(rating),
        at=now,
    )
    return Graded(item, rating, practice, schedule)


def grade(
    session: Session,
    learner: Learner,
    *,
    item: Item,
    rating: Rating,
    version: int,
    token: str,
    now: datetime,
    scheduler: Scheduler,
    answer: str = "",
    duration_ms: int = 0,
    practice: bool = False,
) -> Graded:
    """Record one review: log it, move the item's schedule on (unless practising), count it."""
    graded = record(
        session,
        learner,
        item=item,
        rating=rating,
        version=version,
        token=token,
        now=now,
        scheduler=scheduler,
        answer=answer,
        duration_ms=duration_ms,
        practice=practice,
    )
    session.commit()
    return graded


def intervals(
    schedule: Schedule, item: Item, now: datetime, scheduler: Scheduler
) -> list[tuple[Rating, str]]:
    """What each grade button promises, e.g. (GOOD, "3 days")."""
    preview = scheduler.preview(schedule, now, seed=item.key)
    return [(rating, describe_interval(preview[rating])) for rating in Rating]


def recorded_review(
    session: Session, learner: Learner, snapshot: Snapshot, token: str, now: datetime
) -> Graded | None:
    """The review a plain (no-JavaScript) grade form recorded, to confirm after its redirect.

    None when the token is malformed, names no review of this learner, or its
    card is gone: the page then simply shows no confirmation.
    """
    if not is_token(token):
        return None
    row = session.scalar(
        select(ReviewLog).where(
            col(ReviewLog.user_id) == learner.user_id, col(ReviewLog.uid) == token
        )
    )
    if row is None:
        return None
    try:
        item = find_item(snapshot, item_key(row.card_id, row.follow_up))
    except UnknownItem:
        return None
    schedule = None if row.practice else current_schedule(session, learner.user_id, item, now)
    return Graded(item, Rating(row.rating), row.practice, schedule)

"""Item schedules as stored: the rows, and rebuilding them from the review log.

One ``ReviewItem`` row holds one item's FSRS state, a
:class:`~app.practice.scheduling.Schedule` (:mod:`app.practice.scheduling`
computes states and knows no database; this module reads and writes them).
The log is the truth and the rows are derived: :func:`replay_log` computes
the states the log implies and :func:`rebuild_schedule` writes them back
(after an import, or from ``quizlab db rebuild-schedule``).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select, tuple_
from sqlalchemy.orm import Session
from sqlmodel import col

from app.practice.items import Item, item_key
from app.practice.scheduling import Rating, Schedule, Scheduler, State
from app.storage.models import ReviewItem, ReviewLog


def schedule_of(row: ReviewItem) -> Schedule:
    return Schedule(
        state=State(row.state),
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        due=row.due,
        last_review=row.last_review,
        first_review=row.first_review,
        lapses=row.lapses,
        version=row.version,
    )


def schedule_columns(schedule: Schedule) -> dict[str, Any]:
    """The ``ReviewItem`` column values that store ``schedule``."""
    return {
        "state": int(schedule.state),
        "step": schedule.step,
        "stability": schedule.stability,
        "difficulty": schedule.difficulty,
        "due": schedule.due,
        "last_review": schedule.last_review,
        "first_review": schedule.first_review,
        "lapses": schedule.lapses,
        "version": schedule.version,
    }


def item_row(session: Session, user_id: int, card_id: str, follow_up: str) -> ReviewItem | None:
    """The item's row, or None for an item the learner never graded."""
    return session.scalars(
        select(ReviewItem).where(
            col(ReviewItem.user_id) == user_id,
            col(ReviewItem.card_id) == card_id,
            col(ReviewItem.follow_up) == follow_up,
        )
    ).one_or_none()


def current_schedule(session: Session, user_id: int, item: Item, now: datetime) -> Schedule:
    """The item's stored state, or a new item's state when it was never graded."""
    row = item_row(session, user_id, item.card.id, item.follow_up_key)
    return schedule_of(row) if row is not None else Schedule.new(now)


def load_schedules(session: Session, user_id: int) -> dict[tuple[str, str], Schedule]:
    """Every stored item state of the learner, by (card_id, follow_up)."""
    rows = session.scalars(select(ReviewItem).where(col(ReviewItem.user_id) == user_id))
    return {(row.card_id, row.follow_up): schedule_of(row) for row in rows}


def replay_log(
    session: Session,
    user_id: int,
    scheduler: Scheduler,
    *,
    items: Iterable[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], Schedule]:
    """The item states the review log implies, by (card_id, follow_up); practice is skipped."""
    query = select(
        col(ReviewLog.card_id),
        col(ReviewLog.follow_up),
        col(ReviewLog.rating),
        col(ReviewLog.reviewed_at),
    ).where(col(ReviewLog.user_id) == user_id, col(ReviewLog.practice).is_(False))
    wanted = set(items) if items is not None else None
    if wanted is not None:
        query = query.where(col(ReviewLog.card_id).in_({card_id for card_id, _ in wanted}))
    rows = session.execute(
        query.order_by(
            col(ReviewLog.card_id),
            col(ReviewLog.follow_up),
            col(ReviewLog.reviewed_at),
            col(ReviewLog.id),
        ).execution_options(yield_per=5_000)
    )
    schedules: dict[tuple[str, str], Schedule] = {}
    current: tuple[str, str] | None = None
    schedule = Schedule.new(datetime.now(UTC))
    for card_id, follow_up, rating, at in rows:
        key = (card_id, follow_up)
        if wanted is not None and key not in wanted:
            continue
        if key != current:
            if current is not None:
                schedules[current] = schedule
            current, schedule = key, Schedule.new(at)
        schedule = scheduler.review(schedule, Rating(rating), at, seed=item_key(*key))
    if current is not None:
        schedules[current] = schedule
    return schedules


@dataclass
class Rebuilt:
    items: int
    changed: list[str] = field(default_factory=list)  # item keys whose stored state differed


def rebuild_schedule(
    session: Session,
    user_id: int,
    scheduler: Scheduler,
    *,
    items: Iterable[tuple[str, str]] | None = None,
) -> Rebuilt:
    """Replace stored item states with the ones the log implies (the caller commits).

    The rows may now name items the content no longer has: a process that
    serves the queue from a snapshot drops that snapshot's archived sets
    afterwards (:func:`app.practice.queue.forget_archived`).
    """
    wanted = set(items) if items is not None else None
    rebuilt = replay_log(session, user_id, scheduler, items=wanted)
    stored = load_schedules(session, user_id)
    if wanted is not None:
        stored = {key: value for key, value in stored.items() if key in wanted}
    changed = sorted(
        item_key(*key) for key in set(rebuilt) | set(stored) if rebuilt.get(key) != stored.get(key)
    )
    mine = col(ReviewItem.user_id) == user_id
    if wanted is None:
        session.execute(delete(ReviewItem).where(mine))
    else:
        pairs = sorted(wanted)
        for begin in range(0, len(pairs), 1_000):
            chunk = pairs[begin : begin + 1_000]
            session.execute(
                delete(ReviewItem).where(
                    mine, tuple_(col(ReviewItem.card_id), col(ReviewItem.follow_up)).in_(chunk)
                )
            )
    rows = [
        {
            "user_id": user_id,
            "card_id": card_id,
            "follow_up": follow_up,
            **schedule_columns(schedule),
        }
        for (card_id, follow_up), schedule in rebuilt.items()
    ]
    for begin in range(0, len(rows), 5_000):
        session.execute(insert(ReviewItem), rows[begin : begin + 5_000])
    return Rebuilt(len(rebuilt), changed)

"""What is coming: live items due on each of the next days, and "next due in ...".

:func:`due_forecast` counts the learner's live items per local day in one
query over the item states (one ``SUM(CASE ...)`` per day), never the review log.
"""

import functools
from datetime import date, datetime, timedelta

from sqlalchemy import ColumnElement, and_, bindparam, case, func, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.queue import live_filter
from app.practice.scheduling import describe_interval
from app.storage.models import ReviewItem, UTCDateTime


@functools.cache
def _forecast_columns(days: int) -> tuple[ColumnElement[int], ...]:
    """One SUM(CASE ...) per day, bounds as parameters: built once, compiled once."""
    due = col(ReviewItem.due)
    bounds = [bindparam(f"day_end_{n}", type_=UTCDateTime()) for n in range(days)]
    return tuple(
        func.coalesce(
            func.sum(
                case((due < bounds[0], 1), else_=0)
                if n == 0
                else case((and_(due >= bounds[n - 1], due < bounds[n]), 1), else_=0)
            ),
            0,
        )
        for n in range(days)
    )


def due_forecast(
    session: Session, learner: Learner, *, snapshot: Snapshot, now: datetime, days: int = 14
) -> list[tuple[date, int]]:
    """Items due on each of the next ``days`` local days; today includes everything overdue."""
    today = learner.day_of(now)
    ends = {f"day_end_{n}": learner.start_of(today + timedelta(days=n + 1)) for n in range(days)}
    conditions = live_filter(session, learner.user_id, snapshot, None)
    query = select(*_forecast_columns(days)).where(
        *conditions, col(ReviewItem.due) < ends[f"day_end_{days - 1}"]
    )
    counts = session.execute(query, ends).one()
    return [(today + timedelta(days=n), int(counts[n])) for n in range(days)]


def describe_when(at: datetime, now: datetime, learner: Learner) -> str:
    """``in 3 hours (Tue 14 Jan, 14:05)``: when the next item is due, in the learner's zone."""
    local = at.astimezone(learner.zone)
    return f"in {describe_interval(at - now)} ({local:%a %d %b, %H:%M})"

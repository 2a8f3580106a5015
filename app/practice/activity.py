"""Running totals of a learner's activity, kept beside the logs so stats never scan them.

Every review and multiple-choice attempt adds to two rows in the same
transaction that logs it: the learner's day (:class:`app.storage.models.DailyActivity`)
and the card (:class:`app.storage.models.CardActivity`). Both are upserts, atomic on
SQLite and PostgreSQL, so attempts recorded at the same moment all count.
The totals are derived data: :func:`rebuild` recomputes them from the logs
(after an import, or after changing the time zone).
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.storage.database import upsert
from app.storage.models import ANSWER, CardActivity, ChoiceAttempt, DailyActivity, ReviewLog

# Hard, Good and Easy mean the item was recalled; Again means it was not.
RECALLED_FROM = 2
_BATCH = 5_000


@dataclass(frozen=True)
class Learner:
    """Whose progress it is, and where their day ends."""

    user_id: int
    zone: ZoneInfo

    def day_of(self, at: datetime) -> date:
        return at.astimezone(self.zone).date()

    def start_of(self, day: date) -> datetime:
        """The UTC instant the learner's ``day`` begins."""
        return datetime.combine(day, time(), tzinfo=self.zone).astimezone(UTC)


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def count_review(
    session: Session, learner: Learner, *, card_id: str, follow_up: str, rating: int, at: datetime
) -> None:
    """Add one review to the day's and the card's totals (the caller commits)."""
    recalled = int(rating >= RECALLED_FROM)
    dialect = _dialect(session)
    session.execute(
        upsert(
            dialect,
            DailyActivity.__table__,  # type: ignore[attr-defined]
            {
                "user_id": learner.user_id,
                "day": learner.day_of(at),
                "reviews": 1,
                "recalled": recalled,
                "choices": 0,
                "choices_correct": 0,
            },
            keys=["user_id", "day"],
            add=["reviews", "recalled"],
        )
    )
    part = "answer" if follow_up == ANSWER else "follow_up"
    session.execute(
        upsert(
            dialect,
            CardActivity.__table__,  # type: ignore[attr-defined]
            {
                "user_id": learner.user_id,
                "card_id": card_id,
                "answer_reviews": int(part == "answer"),
                "answer_recalled": recalled * (part == "answer"),
                "follow_up_reviews": int(part == "follow_up"),
                "follow_up_recalled": recalled * (part == "follow_up"),
                "choices": 0,
                "choices_correct": 0,
                "last_activity": at,
            },
            keys=["user_id", "card_id"],
            add=[f"{part}_reviews", f"{part}_recalled"],
            replace=("last_activity",),
        )
    )


def count_choice(
    session: Session, learner: Learner, *, card_id: str, correct: bool, at: datetime
) -> None:
    """Add one multiple-choice attempt to the day's and the card's totals (the caller commits)."""
    dialect = _dialect(session)
    session.execute(
        upsert(
            dialect,
            DailyActivity.__table__,  # type: ignore[attr-defined]
            {
                "user_id": learner.user_id,
                "day": learner.day_of(at),
                "reviews": 0,
                "recalled": 0,
                "choices": 1,
                "choices_correct": int(correct),
            },
            keys=["user_id", "day"],
            add=["choices", "choices_correct"],
        )
    )
    session.execute(
        upsert(
            dialect,
            CardActivity.__table__,  # type: ignore[attr-defined]
            {
                "user_id": learner.user_id,
                "card_id": card_id,
                "answer_reviews": 0,
                "answer_recalled": 0,
                "follow_up_reviews": 0,
                "follow_up_recalled": 0,
                "choices": 1,
                "choices_correct": int(correct),
                "last_activity": at,
            },
            keys=["user_id", "card_id"],
            add=["choices", "choices_correct"],
            replace=("last_activity",),
        )
    )


def rebuild(session: Session, learner: Learner) -> None:
    """Recompute the learner's totals from the review log and choice attempts (caller commits)."""
    days: dict[date, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    cards: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    last: dict[str, datetime] = {}

    def seen(card_id: str, at: datetime) -> None:
        if card_id not in last or at > last[card_id]:
            last[card_id] = at

    reviews = session.execute(
        select(
            col(ReviewLog.card_id),
            col(ReviewLog.follow_up),
            col(ReviewLog.rating),
            col(ReviewLog.reviewed_at),
        )
        .where(col(ReviewLog.user_id) == learner.user_id)
        .execution_options(yield_per=_BATCH)
    )
    for card_id, follow_up, rating, at in reviews:
        recalled = int(rating >= RECALLED_FROM)
        totals = days[learner.day_of(at)]
        totals[0] += 1
        totals[1] += recalled
        offset = 0 if follow_up == ANSWER else 2
        card = cards[card_id]
        card[offset] += 1
        card[offset + 1] += recalled
        seen(card_id, at)
    choices = session.execute(
        select(
            col(ChoiceAttempt.card_id), col(ChoiceAttempt.correct), col(ChoiceAttempt.attempted_at)
        )
        .where(col(ChoiceAttempt.user_id) == learner.user_id)
        .execution_options(yield_per=_BATCH)
    )
    for card_id, correct, at in choices:
        totals = days[learner.day_of(at)]
        totals[2] += 1
        totals[3] += int(correct)
        card = cards[card_id]
        card[4] += 1
        card[5] += int(correct)
        seen(card_id, at)

    session.execute(delete(DailyActivity).where(col(DailyActivity.user_id) == learner.user_id))
    session.execute(delete(CardActivity).where(col(CardActivity.user_id) == learner.user_id))
    day_rows = _day_rows(learner.user_id, days)
    card_rows = _card_rows(learner.user_id, cards, last)
    if day_rows:
        session.execute(insert(DailyActivity), day_rows)
    if card_rows:
        session.execute(insert(CardActivity), card_rows)


def _day_rows(user_id: int, days: dict[date, list[int]]) -> list[dict[str, Any]]:
    """``DailyActivity`` rows from rebuild's sums: reviews, recalled, choices, correct."""
    return [
        {
            "user_id": user_id,
            "day": day,
            "reviews": t[0],
            "recalled": t[1],
            "choices": t[2],
            "choices_correct": t[3],
        }
        for day, t in days.items()
    ]


def _card_rows(
    user_id: int, cards: dict[str, list[int]], last: dict[str, datetime]
) -> list[dict[str, Any]]:
    """``CardActivity`` rows from rebuild's sums: answers, follow-ups, choices (n, right)."""
    return [
        {
            "user_id": user_id,
            "card_id": card_id,
            "answer_reviews": t[0],
            "answer_recalled": t[1],
            "follow_up_reviews": t[2],
            "follow_up_recalled": t[3],
            "choices": t[4],
            "choices_correct": t[5],
            "last_activity": last[card_id],
        }
        for card_id, t in cards.items()
    ]

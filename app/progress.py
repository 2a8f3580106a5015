"""A learner's history as a whole: multiple-choice attempts, and export and import as JSON.

The export holds the two append-only logs (reviews and multiple-choice
attempts), each row with its ``uid``. Item schedules and activity totals are
not exported: they are derived, and an import rebuilds them from the merged
logs. A row whose ``uid`` the learner already has is skipped, so importing the
same file twice adds nothing, and merging exports from two machines keeps
both histories.
"""

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app import activity, review
from app.activity import Learner
from app.card import Choice
from app.models import ChoiceAttempt, ReviewLog
from app.scheduling import Scheduler

FORMAT = "quizlab-progress"
VERSION = 1
_ID = r"^[a-z0-9][a-z0-9-]{0,79}$"
_UID = r"^[0-9a-f]{32}$"
_BATCH = 1_000


def record_choice(
    session: Session, learner: Learner, *, card_id: str, choice: Choice, now: datetime | None = None
) -> None:
    """Log one multiple-choice answer (the option and whether it was right) and count it."""
    at = now or datetime.now(UTC)
    session.execute(
        insert(ChoiceAttempt).values(
            uid=secrets.token_hex(16),
            user_id=learner.user_id,
            card_id=card_id,
            choice=choice.key,
            choice_text=choice.text,
            correct=choice.correct,
            attempted_at=at,
        )
    )
    activity.count_choice(session, learner, card_id=card_id, correct=choice.correct, at=at)
    session.commit()


# -- The file format ---------------------------------------------------------


class ExportedReview(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uid: str = Field(pattern=_UID)
    card_id: str = Field(pattern=_ID)
    follow_up: str = Field(default="", pattern=r"^([a-z0-9][a-z0-9-]{0,79})?$")
    rating: int = Field(ge=1, le=4)
    answer: str = ""
    duration_ms: int = Field(default=0, ge=0)
    reviewed_at: AwareDatetime
    practice: bool = False


class ExportedChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uid: str = Field(pattern=_UID)
    card_id: str = Field(pattern=_ID)
    choice: str = Field(min_length=1, max_length=8)
    choice_text: str = ""
    correct: bool
    attempted_at: AwareDatetime


class ProgressFile(BaseModel):
    """The whole export: ``{"format": "quizlab-progress", "version": 1, ...}``."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["quizlab-progress"]
    version: Literal[1]
    exported_at: AwareDatetime | None = None
    reviews: list[ExportedReview] = []
    choices: list[ExportedChoice] = []


class ProgressFileError(ValueError):
    """A file that is not a Quizlab progress export; the message names the first bad fields."""


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def export(session: Session, user_id: int, *, now: datetime | None = None) -> Iterator[str]:
    """The learner's progress as JSON text, in chunks, oldest first: a million rows stream."""
    exported_at = _iso(now or datetime.now(UTC))
    yield f'{{"format": "{FORMAT}", "version": {VERSION}, "exported_at": "{exported_at}",\n'
    yield ' "reviews": ['
    reviews = session.execute(
        select(ReviewLog)
        .where(col(ReviewLog.user_id) == user_id)
        .order_by(col(ReviewLog.id))
        .execution_options(yield_per=_BATCH)
    ).scalars()
    separator = "\n  "
    for row in reviews:
        record = {
            "uid": row.uid,
            "card_id": row.card_id,
            "follow_up": row.follow_up,
            "rating": row.rating,
            "answer": row.answer,
            "duration_ms": row.duration_ms,
            "reviewed_at": _iso(row.reviewed_at),
            "practice": row.practice,
        }
        yield separator + json.dumps(record, ensure_ascii=False)
        separator = ",\n  "
    yield '\n ],\n "choices": ['
    choices = session.execute(
        select(ChoiceAttempt)
        .where(col(ChoiceAttempt.user_id) == user_id)
        .order_by(col(ChoiceAttempt.id))
        .execution_options(yield_per=_BATCH)
    ).scalars()
    separator = "\n  "
    for attempt in choices:
        record = {
            "uid": attempt.uid,
            "card_id": attempt.card_id,
            "choice": attempt.choice,
            "choice_text": attempt.choice_text,
            "correct": attempt.correct,
            "attempted_at": _iso(attempt.attempted_at),
        }
        yield separator + json.dumps(record, ensure_ascii=False)
        separator = ",\n  "
    yield "\n ]\n}\n"


def parse(text: str | bytes) -> ProgressFile:
    """Check an export's text; :class:`ProgressFileError` names what is wrong and where."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProgressFileError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProgressFileError(f'not a Quizlab progress export: expected "format": "{FORMAT}"')
    if data.get("version") != VERSION:
        raise ProgressFileError(
            f"export version {data.get('version')!r} is not one this Quizlab reads ({VERSION})"
        )
    try:
        return ProgressFile.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()[:5]
        ]
        more = exc.error_count() - len(problems)
        suffix = f" (and {more} more)" if more > 0 else ""
        raise ProgressFileError("; ".join(problems) + suffix) from exc


@dataclass(frozen=True)
class Imported:
    reviews_added: int
    reviews_skipped: int
    choices_added: int
    choices_skipped: int

    def __str__(self) -> str:
        return (
            f"{self.reviews_added} review(s) and {self.choices_added} multiple-choice "
            f"attempt(s) added; {self.reviews_skipped + self.choices_skipped} already there"
        )


def _known_uids(session: Session, table: Any, user_id: int, uids: list[str]) -> set[str]:
    return set(
        session.scalars(select(table.uid).where(table.user_id == user_id, table.uid.in_(uids)))
    )


def import_file(
    session: Session, learner: Learner, progress: ProgressFile, *, scheduler: Scheduler
) -> Imported:
    """Add the rows the learner does not have yet, rebuild what derives from them, commit once."""
    user_id = learner.user_id
    touched: set[tuple[str, str]] = set()
    seen: set[str] = set()
    added_reviews = 0
    for begin in range(0, len(progress.reviews), _BATCH):
        chunk = progress.reviews[begin : begin + _BATCH]
        known = _known_uids(session, ReviewLog, user_id, [r.uid for r in chunk]) | seen
        rows = []
        for record in chunk:
            if record.uid in known:
                continue
            known.add(record.uid)
            rows.append({"user_id": user_id, **record.model_dump()})
            if not record.practice:
                touched.add((record.card_id, record.follow_up))
        seen |= {r.uid for r in chunk}
        if rows:
            session.execute(insert(ReviewLog), rows)
            added_reviews += len(rows)
    seen = set()
    added_choices = 0
    for begin in range(0, len(progress.choices), _BATCH):
        chunk_choices = progress.choices[begin : begin + _BATCH]
        known = _known_uids(session, ChoiceAttempt, user_id, [c.uid for c in chunk_choices]) | seen
        rows = []
        for attempt in chunk_choices:
            if attempt.uid in known:
                continue
            known.add(attempt.uid)
            rows.append({"user_id": user_id, **attempt.model_dump()})
        seen |= {c.uid for c in chunk_choices}
        if rows:
            session.execute(insert(ChoiceAttempt), rows)
            added_choices += len(rows)
    if added_reviews or added_choices:
        if touched:
            review.rebuild_schedule(session, user_id, scheduler, items=touched)
        activity.rebuild(session, learner)
    session.commit()
    review.forget_cached_items()
    return Imported(
        added_reviews,
        len(progress.reviews) - added_reviews,
        added_choices,
        len(progress.choices) - added_choices,
    )

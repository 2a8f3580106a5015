"""A learner's history as a whole: multiple-choice attempts, and export and import as JSON.

The export holds the two append-only logs (reviews and multiple-choice
attempts), each row with its ``uid``, and the mock interview rounds
(:mod:`app.practice.interview.records`), each with its ``uid`` too. Item
schedules and activity totals are not exported: they are derived, and an
import rebuilds them from the merged logs. A row whose ``uid`` the learner
already has is skipped, so importing the same file twice adds nothing, and
merging exports from two machines keeps both histories.
"""

import json
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app import safejson
from app.content.card import Choice
from app.content.library import Snapshot
from app.practice import activity
from app.practice.activity import Learner
from app.practice.aliases import adopt_aliases
from app.practice.grading import MAX_ANSWER_LENGTH, MAX_DURATION_MS
from app.practice.interview.records import ExportedRound, add_rounds, export_rounds
from app.practice.queue import forget_archived
from app.practice.scheduling import Scheduler
from app.practice.stored import rebuild_schedule
from app.storage.models import ChoiceAttempt, ReviewLog
from app.storage.values import storable_text

FORMAT = "quizlab-progress"
VERSION = 1
_ID = r"^[a-z0-9][a-z0-9-]{0,79}$"
_UID = r"^[0-9a-f]{32}$"
_BATCH = 1_000
MAX_DEPTH = 32  # an export nests 3 levels deep; a file nested far deeper is no export
# Reviews happen in this era; outside it a date is no review, and near year 1
# or 9999 converting it to UTC, or scheduling from it, would overflow.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)


def _in_era(at: datetime) -> datetime:
    if not EARLIEST <= at < LATEST:
        raise ValueError(f"a date from {EARLIEST.year} to {LATEST.year - 1}, not {at.isoformat()}")
    return at


def _at_most_an_hour(duration_ms: int) -> int:
    # As when grading (app.practice.grading): longer is a tab left open. It also
    # keeps a SQLite export importable into PostgreSQL's 32-bit column.
    return min(duration_ms, MAX_DURATION_MS)


Text = Annotated[str, AfterValidator(storable_text)]
When = Annotated[AwareDatetime, AfterValidator(_in_era)]
Duration = Annotated[int, Field(ge=0), AfterValidator(_at_most_an_hour)]


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
            red_flag=choice.flag or "",
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
    answer: Text = Field(default="", max_length=MAX_ANSWER_LENGTH)
    duration_ms: Duration = 0
    reviewed_at: When
    practice: bool = False


class ExportedChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uid: str = Field(pattern=_UID)
    card_id: str = Field(pattern=_ID)
    choice: str = Field(min_length=1, max_length=8)
    choice_text: Text = Field(default="", max_length=MAX_ANSWER_LENGTH)
    # Added in the same version: the option's identity; "" in older exports.
    red_flag: str = Field(default="", pattern=r"^$|" + _ID)
    correct: bool
    attempted_at: When


class ProgressFile(BaseModel):
    """The whole export: ``{"format": "quizlab-progress", "version": 1, ...}``."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["quizlab-progress"]
    version: Literal[1]
    exported_at: AwareDatetime | None = None
    reviews: list[ExportedReview] = []
    choices: list[ExportedChoice] = []
    # Added in the same version: a file without it (an older export) has no rounds.
    interviews: list[ExportedRound] = []


Record = TypeVar("Record", ExportedReview, ExportedChoice)


class ProgressFileError(ValueError):
    """A file that is not a Quizlab progress export; the message names the first bad fields."""


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _review_record(row: ReviewLog) -> dict[str, Any]:
    return {
        "uid": row.uid,
        "card_id": row.card_id,
        "follow_up": row.follow_up,
        "rating": row.rating,
        "answer": row.answer,
        "duration_ms": row.duration_ms,
        "reviewed_at": _iso(row.reviewed_at),
        "practice": row.practice,
    }


def _choice_record(row: ChoiceAttempt) -> dict[str, Any]:
    return {
        "uid": row.uid,
        "card_id": row.card_id,
        "choice": row.choice,
        "choice_text": row.choice_text,
        "red_flag": row.red_flag,
        "correct": row.correct,
        "attempted_at": _iso(row.attempted_at),
    }


def _array_items(
    session: Session, table: Any, user_id: int, record: Callable[[Any], dict[str, Any]]
) -> Iterator[str]:
    """One log's rows for the learner as the items of a JSON array, oldest first, in batches."""
    rows = session.execute(
        select(table)
        .where(table.user_id == user_id)
        .order_by(table.id)
        .execution_options(yield_per=_BATCH)
    ).scalars()
    separator = "\n  "
    for row in rows:
        yield separator + json.dumps(record(row), ensure_ascii=False)
        separator = ",\n  "


def export(session: Session, user_id: int, *, now: datetime | None = None) -> Iterator[str]:
    """The learner's progress as JSON text, in chunks, oldest first: a million rows stream."""
    exported_at = _iso(now or datetime.now(UTC))
    yield f'{{"format": "{FORMAT}", "version": {VERSION}, "exported_at": "{exported_at}",\n'
    yield ' "reviews": ['
    yield from _array_items(session, ReviewLog, user_id, _review_record)
    yield '\n ],\n "choices": ['
    yield from _array_items(session, ChoiceAttempt, user_id, _choice_record)
    yield '\n ],\n "interviews": ['
    yield from export_rounds(session, user_id)
    yield "\n ]\n}\n"


def parse(text: str | bytes) -> ProgressFile:
    """Check an export's text; :class:`ProgressFileError` names what is wrong and where."""
    try:
        data: Any = safejson.loads(text, max_depth=MAX_DEPTH)
    except safejson.BadJSON as exc:
        raise ProgressFileError(str(exc)) from None
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
    rounds_added: int = 0
    rounds_skipped: int = 0

    def __str__(self) -> str:
        skipped = self.reviews_skipped + self.choices_skipped + self.rounds_skipped
        rounds = f", {self.rounds_added} mock interview round(s)" if self.rounds_added else ""
        return (
            f"{self.reviews_added} review(s){rounds} and {self.choices_added} multiple-choice "
            f"attempt(s) added; {skipped} already there"
        )


def _add_new(session: Session, table: Any, user_id: int, records: list[Record]) -> list[Record]:
    """Insert the records whose uid the learner does not have yet; returns those added."""
    added: list[Record] = []
    seen: set[str] = set()  # uids earlier in the file, in case it repeats one
    for begin in range(0, len(records), _BATCH):
        chunk = records[begin : begin + _BATCH]
        uids = [record.uid for record in chunk]
        known = seen | set(
            session.scalars(select(table.uid).where(table.user_id == user_id, table.uid.in_(uids)))
        )
        rows = []
        for record in chunk:
            if record.uid in known:
                continue
            known.add(record.uid)
            rows.append({"user_id": user_id, **record.model_dump()})
            added.append(record)
        seen |= set(uids)
        if rows:
            session.execute(insert(table), rows)
    return added


def import_file(
    session: Session,
    learner: Learner,
    progress: ProgressFile,
    *,
    scheduler: Scheduler,
    snapshot: Snapshot | None = None,
) -> Imported:
    """Add the rows the learner does not have yet, rebuild what derives from them, commit once.

    ``snapshot`` is the content this process serves the queue from, if any: the
    import may add rows of items it no longer has, so its archived sets are
    dropped (:func:`~app.practice.queue.forget_archived`).
    """
    user_id = learner.user_id
    reviews = _add_new(session, ReviewLog, user_id, progress.reviews)
    choices = _add_new(session, ChoiceAttempt, user_id, progress.choices)
    rounds_added = add_rounds(session, user_id, progress.interviews)
    added_reviews, added_choices = len(reviews), len(choices)
    touched = {(r.card_id, r.follow_up) for r in reviews if not r.practice}
    if added_reviews or added_choices:
        if touched:
            rebuild_schedule(session, user_id, scheduler, items=touched)
        activity.rebuild(session, learner)
        if snapshot is not None:
            # Imported reviews may name renamed cards' old ids.
            adopt_aliases(session, snapshot.cards.values())
    session.commit()
    if snapshot is not None:
        forget_archived(snapshot)
    return Imported(
        added_reviews,
        len(progress.reviews) - added_reviews,
        added_choices,
        len(progress.choices) - added_choices,
        rounds_added,
        len(progress.interviews) - rounds_added,
    )

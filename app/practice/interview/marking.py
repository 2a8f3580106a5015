"""Grading a finished round: the learner's ticks become scores, grades and review log entries.

All of it is one transaction: the round is claimed (``graded_at`` is set only
where it is empty, so a second submission finds it set and counts nothing),
then each question reached gets its grade row and, through
:func:`app.practice.grading.record`, one review of its item: the card's answer
for a main question, the follow-up's own item for a follow-up. A review's
uid is derived from the round and the question, so the log can never hold a
question's grade twice, even from an imported copy of the round.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import insert, update
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.errors import InterviewError, RoundConflict
from app.practice.grading import record
from app.practice.interview.rounds import Question, Round, load
from app.practice.interview.scoring import (
    COVERAGE_LEVELS,
    Scored,
    round_score,
    score_answer,
    score_follow_up,
)
from app.practice.scheduling import Scheduler
from app.practice.stored import current_schedule
from app.storage.models import InterviewGrade, InterviewRound


@dataclass(frozen=True)
class Marks:
    """What the learner ticked for one question."""

    points: frozenset[int] = field(default_factory=frozenset)  # key points, by index
    red_flags: frozenset[str] = field(default_factory=frozenset)  # red flags, by key
    coverage: int | None = None  # a follow-up: an index into COVERAGE_LEVELS


def review_uid(round_uid: str, position: int) -> str:
    """The uid of the review a round's question records: the same every time it is computed."""
    return hashlib.sha256(f"interview/{round_uid}/{position}".encode()).hexdigest()[:32]


def gradable(found: Round) -> list[Question]:
    """The questions that get a grade: asked, and still in the content."""
    return [q for q in found.questions if q.reached and q.item is not None]


def grade_round(
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    uid: str,
    marks: Mapping[int, Marks],
    *,
    scheduler: Scheduler,
    now: datetime,
) -> None:
    """Score every question reached, record the grades and their reviews, and commit."""
    found = load(session, learner, snapshot, uid)
    if found.state == "answering":
        raise RoundConflict("This round is still being answered: end it before you grade it.")
    if found.state == "graded":
        raise RoundConflict(
            "This round was graded already (the form was sent twice); nothing was counted again."
        )
    scored = [(q, _score(q, marks.get(q.position, Marks()), now)) for q in gradable(found)]
    total = round_score([s.score for _, s in scored])
    claimed = session.execute(
        update(InterviewRound)
        .where(col(InterviewRound.id) == found.row.id, col(InterviewRound.graded_at).is_(None))
        .values(graded_at=now, score=total)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise RoundConflict("This round was graded already; nothing was counted again.")
    for question, result in scored:
        _record(session, learner, found, question, result, scheduler=scheduler, now=now)
    session.commit()


def _score(question: Question, marks: Marks, now: datetime) -> Scored:
    """The question's result; :class:`InterviewError` names a tick that cannot be right."""
    item = question.item
    assert item is not None
    card = item.card
    flags = {flag.key: flag.title_text for flag in card.red_flags}
    unknown = sorted(marks.red_flags - flags.keys())
    if unknown:
        raise InterviewError(
            f"Question {question.number}: '{unknown[0]}' is not one of the card's red flags. "
            "Nothing was graded: reload the page and tick again."
        )
    hit = [(key, flags[key]) for key in flags if key in marks.red_flags]
    in_time = question.in_time(now)
    if item.follow_up is not None:
        if marks.coverage is None or not 0 <= marks.coverage < len(COVERAGE_LEVELS):
            raise InterviewError(
                f"Question {question.number} (a follow-up): choose how much of the approach "
                "you gave. Nothing was graded: go back and choose."
            )
        return score_follow_up(marks.coverage, hit, in_time=in_time)
    points = [point.text for point in card.key_points]
    if any(not 0 <= index < len(points) for index in marks.points):
        raise InterviewError(
            f"Question {question.number}: a ticked key point is not on the card (it has "
            f"{len(points)}). Nothing was graded: reload the page and tick again."
        )
    return score_answer(points, set(marks.points), hit, in_time=in_time)


def _record(
    session: Session,
    learner: Learner,
    found: Round,
    question: Question,
    result: Scored,
    *,
    scheduler: Scheduler,
    now: datetime,
) -> None:
    item = question.item
    assert item is not None
    token = review_uid(found.uid, question.position)
    schedule = current_schedule(session, learner.user_id, item, now)
    record(
        session,
        learner,
        item=item,
        rating=result.rating,
        version=schedule.version,
        token=token,
        now=now,
        scheduler=scheduler,
        answer=question.answer,
        duration_ms=question.seconds(now) * 1000,
    )
    session.execute(
        insert(InterviewGrade).values(
            question_id=question.id,
            score=result.score,
            rating=int(result.rating),
            covered=json.dumps(result.covered, ensure_ascii=False),
            missed=json.dumps(result.missed, ensure_ascii=False),
            coverage=result.coverage,
            red_flags=json.dumps(result.red_flags, ensure_ascii=False),
            review_uid=token,
            graded_at=now,
        )
    )

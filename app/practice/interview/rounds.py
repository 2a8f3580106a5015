"""A round's life: planned at its start, answered one question at a time under a clock, finished.

The clock is kept in the database: the round's start and end, and each
question's ``asked_at`` (when the previous one was answered), so a reload or
a second tab shows the same times. Every save of a typed answer appends a
row; the latest is the answer. Moving on sets the question's ``answered_at``
and asks the next one, or finishes the round when none is left, when the
learner ends it, or when its time is up (an interviewer lets you finish the
sentence, not start another question). Each step is one transaction.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.errors import InterviewError, RoundConflict, UnknownItem, UnknownRound
from app.practice.grading import MAX_ANSWER_LENGTH
from app.practice.interview.plan import Request, plan
from app.practice.items import Item, find_item, item_key
from app.storage.models import (
    InterviewAnswer,
    InterviewGrade,
    InterviewQuestion,
    InterviewRound,
)

State = Literal["answering", "grading", "graded"]


@dataclass(frozen=True)
class Question:
    """One question of a round, with its latest answer and, once graded, its grade."""

    id: int
    position: int
    card_id: str
    follow_up: str
    minutes: int
    asked_at: datetime | None
    answered_at: datetime | None
    item: Item | None  # None once the card or follow-up has left the content
    answer: str
    saved_at: datetime | None
    grade: InterviewGrade | None

    @property
    def number(self) -> int:
        return self.position + 1

    @property
    def reached(self) -> bool:
        return self.asked_at is not None

    def seconds(self, now: datetime) -> int:
        """Time spent on it so far (or in all, once answered); 0 when never asked."""
        if self.asked_at is None:
            return 0
        return max(0, int(((self.answered_at or now) - self.asked_at).total_seconds()))

    def in_time(self, now: datetime) -> bool:
        return self.seconds(now) <= self.minutes * 60


@dataclass(frozen=True)
class Round:
    row: InterviewRound
    questions: tuple[Question, ...]

    @property
    def uid(self) -> str:
        return self.row.uid

    @property
    def state(self) -> State:
        if self.row.graded_at is not None:
            return "graded"
        return "grading" if self.row.finished_at is not None else "answering"

    @property
    def current(self) -> Question | None:
        """The question being answered; None once the round is finished."""
        if self.row.finished_at is not None:
            return None
        return next((q for q in self.questions if q.reached and q.answered_at is None), None)

    @property
    def reached(self) -> list[Question]:
        return [q for q in self.questions if q.reached]

    def seconds_left(self, now: datetime) -> int:
        return max(0, int((self.row.ends_at - now).total_seconds()))

    def seconds_used(self, now: datetime) -> int:
        end = self.row.finished_at or now
        return max(0, int((end - self.row.started_at).total_seconds()))

    def over_time(self, now: datetime) -> bool:
        return now >= self.row.ends_at


def start(
    session: Session, learner: Learner, snapshot: Snapshot, request: Request, *, now: datetime
) -> str:
    """Plan a round, ask its first question now, and commit; returns the round's uid."""
    uid = secrets.token_hex(16)
    planned = plan(session, learner.user_id, snapshot, request, seed=uid)
    round_id = session.scalar(
        insert(InterviewRound)
        .values(
            uid=uid,
            user_id=learner.user_id,
            decks=",".join(request.decks),
            weakest=request.weakest,
            mix=request.mix,
            minutes=request.minutes,
            started_at=now,
            ends_at=now + timedelta(minutes=request.minutes),
        )
        .returning(col(InterviewRound.id))
    )
    session.execute(
        insert(InterviewQuestion),
        [
            {
                "round_id": round_id,
                "position": position,
                "card_id": question.item.card.id,
                "follow_up": question.item.follow_up_key,
                "minutes": question.minutes,
                "asked_at": now if position == 0 else None,
            }
            for position, question in enumerate(planned)
        ],
    )
    session.commit()
    return uid


def load(session: Session, learner: Learner, snapshot: Snapshot, uid: str) -> Round:
    """The learner's round ``uid`` with its questions; :class:`UnknownRound` for any other."""
    row = session.scalars(
        select(InterviewRound).where(
            col(InterviewRound.user_id) == learner.user_id, col(InterviewRound.uid) == uid
        )
    ).first()
    if row is None:
        raise UnknownRound(
            "There is no mock interview round at this address: the link is wrong, or the "
            "round belongs to another account. Start a round from the Interview page."
        )
    rows = session.scalars(
        select(InterviewQuestion)
        .where(col(InterviewQuestion.round_id) == row.id)
        .order_by(col(InterviewQuestion.position))
    ).all()
    ids = [q.id for q in rows]
    answers = _latest_answers(session, ids)
    grades = {
        g.question_id: g
        for g in session.scalars(
            select(InterviewGrade).where(col(InterviewGrade.question_id).in_(ids))
        )
    }
    questions = []
    for q in rows:
        assert q.id is not None
        text, saved_at = answers.get(q.id, ("", None))
        item = _item(snapshot, q.card_id, q.follow_up)
        questions.append(
            Question(
                id=q.id,
                position=q.position,
                card_id=q.card_id,
                follow_up=q.follow_up,
                minutes=q.minutes,
                asked_at=q.asked_at,
                answered_at=q.answered_at,
                item=item,
                answer=text,
                saved_at=saved_at,
                grade=grades.get(q.id),
            )
        )
    return Round(row, tuple(questions))


def _item(snapshot: Snapshot, card_id: str, follow_up: str) -> Item | None:
    try:
        return find_item(snapshot, item_key(card_id, follow_up))
    except UnknownItem:
        return None


def _latest_answers(
    session: Session, question_ids: list[int | None]
) -> dict[int, tuple[str, datetime]]:
    latest = (
        select(func.max(InterviewAnswer.id))
        .where(col(InterviewAnswer.question_id).in_(question_ids))
        .group_by(col(InterviewAnswer.question_id))
    )
    rows = session.execute(
        select(
            col(InterviewAnswer.question_id),
            col(InterviewAnswer.text),
            col(InterviewAnswer.saved_at),
        ).where(col(InterviewAnswer.id).in_(latest))
    )
    return {question_id: (text, saved_at) for question_id, text, saved_at in rows}


@dataclass(frozen=True)
class Saved:
    at: datetime | None  # when the answer as it is now was saved; None: nothing typed yet
    changed: bool  # False when the text was already saved as it is


def save(
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    uid: str,
    *,
    position: int,
    text: str,
    now: datetime,
) -> Saved:
    """Append the typed answer to the current question, unless it is saved already; commit."""
    check_length(text)
    question = _current(load(session, learner, snapshot, uid), position)
    saved = _append(session, question, text, now)
    session.commit()
    return saved


def advance(
    session: Session,
    learner: Learner,
    snapshot: Snapshot,
    uid: str,
    *,
    position: int,
    text: str,
    now: datetime,
    finish: bool = False,
) -> None:
    """Save the answer and move on, in one transaction.

    On to the next question, or to the end of answering when ``finish`` is
    set, the round's time is up, or no question is left. A second click on
    the same question is :class:`RoundConflict`.
    """
    check_length(text)
    found = load(session, learner, snapshot, uid)
    question = _current(found, position)
    _append(session, question, text, now)
    _set_once(session, InterviewQuestion, question.id, "answered_at", now)
    following = [q for q in found.questions if q.position > position]
    if finish or not following or found.over_time(now):
        assert found.row.id is not None
        _set_once(session, InterviewRound, found.row.id, "finished_at", now)
    else:
        _set_once(session, InterviewQuestion, following[0].id, "asked_at", now)
    session.commit()


def check_length(text: str) -> None:
    if len(text) > MAX_ANSWER_LENGTH:
        raise InterviewError(
            f"An answer can be at most {MAX_ANSWER_LENGTH:,} characters; this one has "
            f"{len(text):,}. Nothing was saved: shorten it and send it again."
        )


def _current(found: Round, position: int) -> Question:
    """The question being answered, if it is the one at ``position``; else a conflict."""
    if found.row.finished_at is not None:
        raise RoundConflict(
            "This round is over: its answers can no longer change, and nothing was saved."
        )
    current = found.current
    assert current is not None  # a round being answered always has a current question
    if current.position != position:
        raise RoundConflict(
            f"Question {position + 1} is not the one being asked (the round is on question "
            f"{current.number}: another tab, or a second click), so nothing was saved."
        )
    return current


def _append(session: Session, question: Question, text: str, now: datetime) -> Saved:
    if text == question.answer and question.saved_at is not None:
        return Saved(question.saved_at, changed=False)
    if not text and question.saved_at is None:
        return Saved(None, changed=False)  # nothing typed yet: nothing to keep
    session.execute(
        insert(InterviewAnswer).values(question_id=question.id, text=text, saved_at=now)
    )
    return Saved(now, changed=True)


def _set_once(
    session: Session,
    table: type[InterviewQuestion] | type[InterviewRound],
    row_id: int,
    column: str,
    value: datetime,
) -> None:
    """Set a time that is set only once; a row where it is set already means a race was lost."""
    done = session.execute(
        update(table)
        .where(col(table.id) == row_id, getattr(table, column).is_(None))
        .values({column: value})
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise RoundConflict(
            "The round moved on while this form was sent (another tab, or a second click); "
            "nothing was saved twice."
        )

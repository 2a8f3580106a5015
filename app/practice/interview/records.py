"""Mock interview rounds in a progress file: the ``interviews`` list of an export, and its import.

Each round is written with its questions, each question with its last saved
answer (the one graded; earlier saves stay in this database only) and its
grade. The reviews a grading recorded travel in the file's ``reviews`` like
any other, so an import rebuilds the schedules from them. A round whose
``uid`` the learner already has is skipped: importing a file twice adds
nothing.
"""

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Self

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import insert, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.practice.grading import MAX_ANSWER_LENGTH
from app.storage.models import (
    InterviewAnswer,
    InterviewGrade,
    InterviewQuestion,
    InterviewRound,
)

_ID = r"^[a-z0-9][a-z0-9-]{0,79}$"
_KEY = r"^([a-z0-9][a-z0-9-]{0,79})?$"
_UID = r"^[0-9a-f]{32}$"


class ExportedGrade(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: int = Field(ge=0, le=100)
    rating: int = Field(ge=1, le=4)
    covered: list[str] = []
    missed: list[str] = []
    coverage: int | None = Field(default=None, ge=0, le=3)
    red_flags: list[tuple[str, str]] = []
    review_uid: str = Field(pattern=_UID)
    graded_at: AwareDatetime


class ExportedQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: int = Field(ge=0)
    card_id: str = Field(pattern=_ID)
    follow_up: str = Field(default="", pattern=_KEY)
    minutes: int = Field(ge=1, le=120)
    asked_at: AwareDatetime | None = None
    answered_at: AwareDatetime | None = None
    answer: str = Field(default="", max_length=MAX_ANSWER_LENGTH)
    saved_at: AwareDatetime | None = None
    grade: ExportedGrade | None = None


class ExportedRound(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uid: str = Field(pattern=_UID)
    decks: list[str] = []
    weakest: bool = False
    mix: str = Field(max_length=16)
    minutes: int = Field(ge=1, le=600)
    started_at: AwareDatetime
    ends_at: AwareDatetime
    finished_at: AwareDatetime | None = None
    graded_at: AwareDatetime | None = None
    score: int | None = Field(default=None, ge=0, le=100)
    questions: list[ExportedQuestion] = Field(min_length=1)

    @model_validator(mode="after")
    def _positions_are_distinct(self) -> Self:
        positions = [question.position for question in self.questions]
        if len(set(positions)) != len(positions):
            raise ValueError("two questions of the round have the same position")
        return self


def _iso(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def _grade_record(grade: InterviewGrade) -> dict[str, Any]:
    return {
        "score": grade.score,
        "rating": grade.rating,
        "covered": json.loads(grade.covered),
        "missed": json.loads(grade.missed),
        "coverage": grade.coverage,
        "red_flags": json.loads(grade.red_flags),
        "review_uid": grade.review_uid,
        "graded_at": _iso(grade.graded_at),
    }


def _round_record(session: Session, row: InterviewRound) -> dict[str, Any]:
    questions = session.scalars(
        select(InterviewQuestion)
        .where(col(InterviewQuestion.round_id) == row.id)
        .order_by(col(InterviewQuestion.position))
    ).all()
    ids = [q.id for q in questions]
    answers: dict[int, InterviewAnswer] = {}
    for answer in session.scalars(
        select(InterviewAnswer)
        .where(col(InterviewAnswer.question_id).in_(ids))
        .order_by(col(InterviewAnswer.id))
    ):
        answers[answer.question_id] = answer  # the last save wins
    grades = {
        g.question_id: g
        for g in session.scalars(
            select(InterviewGrade).where(col(InterviewGrade.question_id).in_(ids))
        )
    }
    return {
        "uid": row.uid,
        "decks": [deck for deck in row.decks.split(",") if deck],
        "weakest": row.weakest,
        "mix": row.mix,
        "minutes": row.minutes,
        "started_at": _iso(row.started_at),
        "ends_at": _iso(row.ends_at),
        "finished_at": _iso(row.finished_at),
        "graded_at": _iso(row.graded_at),
        "score": row.score,
        "questions": [_question_record(q, answers, grades) for q in questions],
    }


def _question_record(
    question: InterviewQuestion,
    answers: dict[int, InterviewAnswer],
    grades: dict[int, InterviewGrade],
) -> dict[str, Any]:
    assert question.id is not None
    answer = answers.get(question.id)
    grade = grades.get(question.id)
    return {
        "position": question.position,
        "card_id": question.card_id,
        "follow_up": question.follow_up,
        "minutes": question.minutes,
        "asked_at": _iso(question.asked_at),
        "answered_at": _iso(question.answered_at),
        "answer": answer.text if answer else "",
        "saved_at": _iso(answer.saved_at) if answer else None,
        "grade": _grade_record(grade) if grade else None,
    }


def export_rounds(session: Session, user_id: int) -> Iterator[str]:
    """The learner's rounds as the items of a JSON array, oldest first."""
    rows = session.scalars(
        select(InterviewRound)
        .where(col(InterviewRound.user_id) == user_id)
        .order_by(col(InterviewRound.id))
    )
    separator = "\n  "
    for row in rows:
        yield separator + json.dumps(_round_record(session, row), ensure_ascii=False)
        separator = ",\n  "


def add_rounds(session: Session, user_id: int, rounds: list[ExportedRound]) -> int:
    """Insert the rounds whose uid the learner does not have yet; the caller commits."""
    uids = [r.uid for r in rounds]
    known = set(
        session.scalars(
            select(col(InterviewRound.uid)).where(
                col(InterviewRound.user_id) == user_id, col(InterviewRound.uid).in_(uids)
            )
        )
    )
    added = 0
    for exported in rounds:
        if exported.uid in known:
            continue
        known.add(exported.uid)
        _insert_round(session, user_id, exported)
        added += 1
    return added


def _insert_round(session: Session, user_id: int, exported: ExportedRound) -> None:
    fields = exported.model_dump(exclude={"questions", "decks"})
    round_id = session.scalar(
        insert(InterviewRound)
        .values(user_id=user_id, decks=",".join(exported.decks), **fields)
        .returning(col(InterviewRound.id))
    )
    for question in exported.questions:
        values = question.model_dump(exclude={"answer", "saved_at", "grade"})
        question_id = session.scalar(
            insert(InterviewQuestion)
            .values(round_id=round_id, **values)
            .returning(col(InterviewQuestion.id))
        )
        if question.saved_at is not None:
            session.execute(
                insert(InterviewAnswer).values(
                    question_id=question_id, text=question.answer, saved_at=question.saved_at
                )
            )
        if question.grade is not None:
            grade = question.grade
            session.execute(
                insert(InterviewGrade).values(
                    question_id=question_id,
                    score=grade.score,
                    rating=grade.rating,
                    covered=json.dumps(grade.covered, ensure_ascii=False),
                    missed=json.dumps(grade.missed, ensure_ascii=False),
                    coverage=grade.coverage,
                    red_flags=json.dumps(grade.red_flags, ensure_ascii=False),
                    review_uid=grade.review_uid,
                    graded_at=grade.graded_at,
                )
            )

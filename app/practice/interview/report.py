"""After grading: the round's report, and the learner's past rounds for the stats page.

The report reads the grades as they were stored (the key points' and red
flags' text then), so it reads the same after an author edits the card. Key
points missed most often are counted over the learner's last
:data:`RECENT_ROUNDS` graded rounds, this one included.
"""

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.card import Card
from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.interview.rounds import Question, Round
from app.practice.interview.scoring import COVERAGE_LEVELS, GOOD_FROM
from app.practice.scheduling import Rating
from app.storage.models import InterviewGrade, InterviewQuestion, InterviewRound

RECENT_ROUNDS = 20
OFTEN_SHOWN = 5
PRACTISE_SHOWN = 5


@dataclass(frozen=True)
class GradedQuestion:
    question: Question
    score: int
    rating: Rating
    covered: tuple[str, ...]
    missed: tuple[str, ...]
    coverage: str | None  # a follow-up: how much of the approach, in words
    red_flags: tuple[tuple[str, str], ...]  # (key, title)


@dataclass(frozen=True)
class Often:
    """A key point (or red flag) and how many times it was missed (or hit)."""

    text: str
    card_id: str
    card: Card | None  # None once the card has left the content
    count: int


@dataclass(frozen=True)
class Report:
    round: Round
    graded: list[GradedQuestion]
    not_reached: list[Question]
    missed_often: list[Often]
    red_flags_hit: list[Often]
    practise_next: list[Card]
    snapshot: Snapshot

    def point(self, card_id: str, text: str) -> Markup | str:
        """A key point as the card renders it now (math and all), else as it was stored."""
        card = self.snapshot.cards.get(card_id)
        found = next((p for p in card.key_points if p.text == text), None) if card else None
        return found.html if found is not None else text


def graded_question(question: Question) -> GradedQuestion | None:
    grade = question.grade
    if grade is None:
        return None
    return GradedQuestion(
        question=question,
        score=grade.score,
        rating=Rating(grade.rating),
        covered=tuple(json.loads(grade.covered)),
        missed=tuple(json.loads(grade.missed)),
        coverage=COVERAGE_LEVELS[grade.coverage] if grade.coverage is not None else None,
        red_flags=tuple((key, title) for key, title in json.loads(grade.red_flags)),
    )


def build_report(session: Session, learner: Learner, snapshot: Snapshot, found: Round) -> Report:
    graded = [g for g in map(graded_question, found.questions) if g is not None]
    flags = Counter((q.question.card_id, title) for q in graded for _, title in q.red_flags)
    return Report(
        round=found,
        graded=graded,
        not_reached=[q for q in found.questions if not q.reached],
        missed_often=_missed_often(session, learner, snapshot),
        red_flags_hit=[
            Often(title, card_id, snapshot.cards.get(card_id), count)
            for (card_id, title), count in flags.most_common()
        ],
        practise_next=_practise_next(snapshot, graded),
        snapshot=snapshot,
    )


def _missed_often(session: Session, learner: Learner, snapshot: Snapshot) -> list[Often]:
    recent = (
        select(col(InterviewRound.id))
        .where(
            col(InterviewRound.user_id) == learner.user_id,
            col(InterviewRound.graded_at).is_not(None),
        )
        .order_by(col(InterviewRound.started_at).desc())
        .limit(RECENT_ROUNDS)
    )
    rows = session.execute(
        select(col(InterviewQuestion.card_id), col(InterviewGrade.missed))
        .join(InterviewQuestion, col(InterviewQuestion.id) == col(InterviewGrade.question_id))
        .where(col(InterviewQuestion.round_id).in_(recent.scalar_subquery()))
    )
    counts = Counter((card_id, text) for card_id, missed in rows for text in json.loads(missed))
    return [
        Often(text, card_id, snapshot.cards.get(card_id), count)
        for (card_id, text), count in counts.most_common(OFTEN_SHOWN)
    ]


def _practise_next(snapshot: Snapshot, graded: list[GradedQuestion]) -> list[Card]:
    """This round's cards with a question under Good, the weakest first."""
    weakest: dict[str, int] = {}
    for question in graded:
        card_id = question.question.card_id
        if question.score < GOOD_FROM:
            weakest[card_id] = min(question.score, weakest.get(card_id, 100))
    ordered = sorted(weakest, key=lambda card_id: weakest[card_id])
    cards = [snapshot.cards[card_id] for card_id in ordered if card_id in snapshot.cards]
    return cards[:PRACTISE_SHOWN]


@dataclass(frozen=True)
class PastRound:
    uid: str
    started_at: datetime
    minutes: int
    questions: int
    score: int | None  # None until graded
    graded: bool


def past_rounds(session: Session, learner: Learner, *, limit: int = 50) -> list[PastRound]:
    """The learner's rounds, newest first, with how many questions each asked."""
    asked = (
        select(func.count())
        .where(
            col(InterviewQuestion.round_id) == col(InterviewRound.id),
            col(InterviewQuestion.asked_at).is_not(None),
        )
        .scalar_subquery()
    )
    rows = session.execute(
        select(
            col(InterviewRound.uid),
            col(InterviewRound.started_at),
            col(InterviewRound.minutes),
            asked,
            col(InterviewRound.score),
            col(InterviewRound.graded_at),
        )
        .where(col(InterviewRound.user_id) == learner.user_id)
        .order_by(col(InterviewRound.started_at).desc(), col(InterviewRound.id).desc())
        .limit(limit)
    )
    return [
        PastRound(uid, started_at, minutes, questions, score, graded_at is not None)
        for uid, started_at, minutes, questions, score, graded_at in rows
    ]

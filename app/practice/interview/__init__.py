"""Mock interviews: a timed round of questions asked like an interviewer, graded on key points.

A round is planned when it starts (:mod:`.plan`: main questions that fill its
length, each with the follow-ups the learner has missed most), answered one
question at a time under a clock kept in the database (:mod:`.rounds`), then
graded by the learner against each card's key points and red flags
(:mod:`.marking`, with the arithmetic in :mod:`.scoring`): each question's
grade goes to the schedule of its item through :func:`app.practice.grading.record`.
:mod:`.report` reads the result back; :mod:`.records` carries rounds in
progress files.
"""

from app.practice.interview.marking import Marks, gradable, grade_round, review_uid
from app.practice.interview.plan import LENGTHS, MIXES, Request, follow_up_minutes
from app.practice.interview.records import ExportedRound, add_rounds, export_rounds
from app.practice.interview.report import (
    GradedQuestion,
    Often,
    PastRound,
    Report,
    build_report,
    graded_question,
    past_rounds,
)
from app.practice.interview.rounds import (
    Question,
    Round,
    Saved,
    State,
    advance,
    check_length,
    load,
    save,
    start,
)
from app.practice.interview.scoring import COVERAGE_LEVELS, RED_FLAG_PENALTY

__all__ = [
    "COVERAGE_LEVELS",
    "LENGTHS",
    "MIXES",
    "RED_FLAG_PENALTY",
    "ExportedRound",
    "GradedQuestion",
    "Marks",
    "Often",
    "PastRound",
    "Question",
    "Report",
    "Request",
    "Round",
    "Saved",
    "State",
    "add_rounds",
    "advance",
    "build_report",
    "check_length",
    "export_rounds",
    "follow_up_minutes",
    "gradable",
    "grade_round",
    "graded_question",
    "load",
    "past_rounds",
    "review_uid",
    "save",
    "start",
]

"""A graded answer's score and the FSRS grade it becomes: plain arithmetic, no database.

A main question scores the share of its card's key points the learner ticked;
a follow-up, how much of its approach they gave (none, some, most, all: 0,
33, 67 or 100). Each red flag ticked takes :data:`RED_FLAG_PENALTY` points
off, down to 0. The score becomes a review grade: under 50 Again, under 80
Hard, 100 within the question's time Easy, else Good. A round scores the
mean of the questions it reached.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from app.practice.scheduling import Rating

COVERAGE_LEVELS = ("None of it", "Some of it", "Most of it", "All of it")
RED_FLAG_PENALTY = 25
AGAIN_BELOW = 50
GOOD_FROM = 80


@dataclass(frozen=True)
class Scored:
    """What one question's grading comes to."""

    score: int  # percent
    rating: Rating
    covered: tuple[str, ...]  # key points ticked, as their text
    missed: tuple[str, ...]  # key points not ticked
    coverage: int | None  # a follow-up: an index into COVERAGE_LEVELS
    red_flags: tuple[tuple[str, str], ...]  # (key, title) of each red flag hit


def score_of(share: float, red_flags: int) -> int:
    """Percent covered, less the red flags' penalty, within 0-100.

    >>> score_of(0.8, 0), score_of(0.8, 1), score_of(0.2, 1)
    (80, 55, 0)
    """
    return max(0, min(100, round(100 * share) - RED_FLAG_PENALTY * red_flags))


def rating_of(score: int, *, in_time: bool) -> Rating:
    """The review grade a question's score gives its item.

    >>> [rating_of(s, in_time=True).label for s in (49, 50, 79, 80, 100)]
    ['Again', 'Hard', 'Hard', 'Good', 'Easy']
    >>> rating_of(100, in_time=False).label
    'Good'
    """
    if score < AGAIN_BELOW:
        return Rating.AGAIN
    if score < GOOD_FROM:
        return Rating.HARD
    return Rating.EASY if score == 100 and in_time else Rating.GOOD


def score_answer(
    points: Sequence[str], ticked: set[int], red_flags: Sequence[tuple[str, str]], *, in_time: bool
) -> Scored:
    """A main question: the key points ticked (indexes into ``points``) and red flags hit."""
    covered = tuple(p for i, p in enumerate(points) if i in ticked)
    missed = tuple(p for i, p in enumerate(points) if i not in ticked)
    score = score_of(len(covered) / len(points) if points else 0.0, len(red_flags))
    return Scored(score, rating_of(score, in_time=in_time), covered, missed, None, tuple(red_flags))


def score_follow_up(
    coverage: int, red_flags: Sequence[tuple[str, str]], *, in_time: bool
) -> Scored:
    """A follow-up: how much of the approach was given (an index into COVERAGE_LEVELS)."""
    score = score_of(coverage / (len(COVERAGE_LEVELS) - 1), len(red_flags))
    return Scored(score, rating_of(score, in_time=in_time), (), (), coverage, tuple(red_flags))


def round_score(scores: Sequence[int]) -> int | None:
    """The mean of the questions' scores; None when no question could be graded.

    >>> round_score([100, 50, 67]), round_score([])
    (72, None)
    """
    return round(sum(scores) / len(scores)) if scores else None

"""When an item comes back: FSRS (the ``fsrs`` package) with deterministic fuzz.

A :class:`Schedule` is the state of one review item after some reviews. It is
a pure function of the item's ratings and their times, so the stored state can
always be rebuilt from the review log (:meth:`Scheduler.replay`), and the
interval a grade button promises is the one the grade gives.

FSRS adds a random "fuzz" to long intervals so cards learnt together do not
stay together forever. Random fuzz would break both promises above, so the
fuzz here is drawn from a hash of the item and its review count instead:
spread out like FSRS's, yet the same every time it is computed.
"""

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum

import fsrs


class Rating(IntEnum):
    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4

    @property
    def label(self) -> str:
        return self.name.capitalize()


class State(IntEnum):
    LEARNING = 1
    REVIEW = 2
    RELEARNING = 3


# FSRS's own fuzz ranges (fsrs.scheduler.FUZZ_RANGES): the spread grows with the interval.
_FUZZ_RANGES = ((2.5, 7.0, 0.15), (7.0, 20.0, 0.1), (20.0, float("inf"), 0.05))


@dataclass(frozen=True)
class Schedule:
    """One item's scheduling state; ``version`` counts the scheduled reviews behind it."""

    state: State
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    first_review: datetime | None
    lapses: int
    version: int

    @classmethod
    def new(cls, now: datetime) -> "Schedule":
        """An item never reviewed: learning, first step, due now."""
        return cls(State.LEARNING, 0, None, None, now, None, None, 0, 0)


class Scheduler:
    """FSRS with the app's settings; reviews are pure: state in, state out."""

    def __init__(self, *, desired_retention: float = 0.9, maximum_interval: int = 36500) -> None:
        self._fsrs = fsrs.Scheduler(
            desired_retention=desired_retention,
            maximum_interval=maximum_interval,
            enable_fuzzing=False,  # see the module docstring: fuzz is added below
        )
        self.maximum_interval = maximum_interval

    def review(self, schedule: Schedule, rating: Rating, at: datetime, *, seed: str) -> Schedule:
        """The state after rating the item at ``at``; ``seed`` names the item for the fuzz."""
        if at.tzinfo is None:
            raise ValueError("review times must be aware datetimes")
        at = at.astimezone(UTC)
        card = fsrs.Card(
            card_id=0,  # unused; the default would sleep 1 ms to make one up
            state=fsrs.State(int(schedule.state)),
            step=schedule.step,
            stability=schedule.stability,
            difficulty=schedule.difficulty,
            due=schedule.due,
            last_review=schedule.last_review,
        )
        after, _log = self._fsrs.review_card(card, fsrs.Rating(int(rating)), review_datetime=at)
        state = State(int(after.state))
        due = after.due
        if state is State.REVIEW:
            due = at + self._fuzz(due - at, f"{seed}:{schedule.version}")
        return Schedule(
            state=state,
            step=after.step,
            stability=after.stability,
            difficulty=after.difficulty,
            due=due,
            last_review=at,
            first_review=schedule.first_review or at,
            lapses=schedule.lapses + (rating is Rating.AGAIN and schedule.state is State.REVIEW),
            version=schedule.version + 1,
        )

    def preview(self, schedule: Schedule, at: datetime, *, seed: str) -> dict[Rating, timedelta]:
        """The interval each rating would give now: what the grade buttons show."""
        return {rating: self.review(schedule, rating, at, seed=seed).due - at for rating in Rating}

    def replay(self, reviews: list[tuple[Rating, datetime]], *, seed: str) -> Schedule:
        """The state after these reviews, in time order: how the log rebuilds the schedule."""
        ordered = sorted(reviews, key=lambda review: review[1])
        schedule = Schedule.new(ordered[0][1] if ordered else datetime.now(UTC))
        for rating, at in ordered:
            schedule = self.review(schedule, rating, at, seed=seed)
        return schedule

    def _fuzz(self, interval: timedelta, seed: str) -> timedelta:
        days = interval.days
        if days < 2.5:
            return interval
        delta = 1.0
        for start, end, factor in _FUZZ_RANGES:
            delta += factor * max(min(float(days), end) - start, 0.0)
        low = max(2, round(days - delta))
        high = min(round(days + delta), self.maximum_interval)
        low = min(low, high)
        fraction = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8]) / 2**64
        fuzzed = min(round(fraction * (high - low + 1) + low), self.maximum_interval)
        return interval + timedelta(days=fuzzed - days)


def describe_interval(interval: timedelta) -> str:
    """A short human interval for a grade button: "10 min", "3 days", "2.5 months".

    >>> describe_interval(timedelta(seconds=58)), describe_interval(timedelta(hours=20))
    ('1 min', '20 hours')
    >>> describe_interval(timedelta(days=45)), describe_interval(timedelta(days=400))
    ('1.5 months', '1.1 years')
    """
    seconds = interval.total_seconds()
    if seconds <= 0:
        return "now"
    if seconds < 3570:
        # A learning step of 1 min is "1 min" even when a few seconds have passed.
        return f"{max(1, round(seconds / 60))} min"
    if seconds < 86400:
        hours = round(seconds / 3600)
        return f"{hours} hour{'s' if hours != 1 else ''}"
    days = seconds / 86400
    if days < 30.5:
        whole = round(days)
        return f"{whole} day{'s' if whole != 1 else ''}"
    if days < 365:
        return _one_decimal(days / 30.4375, "month")
    return _one_decimal(days / 365.25, "year")


def _one_decimal(value: float, unit: str) -> str:
    text = f"{value:.1f}".removesuffix(".0")
    return f"{text} {unit}{'' if text == '1' else 's'}"

"""FSRS as the app uses it: pure, deterministic, and the intervals read as a person says them."""

import doctest
from datetime import UTC, datetime, timedelta

import pytest

from app.practice import scheduling
from app.practice.scheduling import Rating, Schedule, Scheduler, State

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def test_the_docstring_examples_run() -> None:
    failures, _tried = doctest.testmod(scheduling)
    assert failures == 0


def test_a_new_item_learns_in_short_steps_then_moves_to_days() -> None:
    scheduler = Scheduler()
    first = scheduler.review(Schedule.new(T0), Rating.GOOD, T0, seed="x")
    assert (first.state, first.version, first.first_review) == (State.LEARNING, 1, T0)
    assert first.due - T0 == timedelta(minutes=10)
    second = scheduler.review(first, Rating.GOOD, first.due, seed="x")
    assert second.state is State.REVIEW and second.due - first.due >= timedelta(days=1)
    lapse = scheduler.review(second, Rating.AGAIN, second.due, seed="x")
    assert (lapse.state, lapse.lapses) == (State.RELEARNING, 1)


def test_the_same_reviews_give_the_same_schedule_every_time() -> None:
    reviews = [(Rating.GOOD, T0 + timedelta(days=d)) for d in (0, 1, 4, 15, 40)]
    runs = {Scheduler().replay(reviews, seed="card/follow-up") for _ in range(5)}
    assert len(runs) == 1


def test_fuzz_spreads_items_learnt_together_but_stays_near_the_interval() -> None:
    reviews = [
        (Rating.GOOD, T0),
        (Rating.GOOD, T0 + timedelta(days=1)),
        (Rating.GOOD, T0 + timedelta(days=5)),
    ]
    dues = {Scheduler().replay(reviews, seed=f"card-{n}").due for n in range(40)}
    assert len(dues) > 3
    spread = max(dues) - min(dues)
    assert timedelta(days=1) <= spread <= timedelta(days=8)


def test_a_higher_desired_retention_brings_items_back_sooner() -> None:
    reviews = [(Rating.GOOD, T0), (Rating.GOOD, T0 + timedelta(days=1))]
    relaxed = Scheduler(desired_retention=0.8).replay(reviews, seed="x")
    strict = Scheduler(desired_retention=0.97).replay(reviews, seed="x")
    assert strict.due < relaxed.due


def test_review_times_must_carry_a_time_zone() -> None:
    with pytest.raises(ValueError, match="aware"):
        Scheduler().review(Schedule.new(T0), Rating.GOOD, datetime(2025, 3, 3), seed="x")

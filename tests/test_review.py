"""The review queue and grading, on SQLite and PostgreSQL, with the clock passed in."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app import practice
from app.content.library import Library, Snapshot
from app.practice import AlreadyRecorded, StaleItem, UnknownItem
from app.practice.activity import Learner
from app.practice.scheduling import Rating, Scheduler
from app.storage.database import Database
from app.storage.models import ReviewItem, ReviewLog
from tests.cardtext import GOOD_CARD, OTHER_CARD
from tests.conftest import Grader

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)  # a Monday morning
# New items in content order: easy cards first, each answer before its follow-ups.
ORDER = [
    "test-other",
    "test-other/why-exp",
    "test-scaling",
    "test-scaling/why-sqrt",
    "test-scaling/flash",
]


def next_key(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    now: datetime,
    *,
    new_per_day: int = 20,
    deck: str | None = None,
) -> str | None:
    with database.session() as session:
        due, _status = practice.next_item(
            session, learner, snapshot=snapshot, now=now, new_per_day=new_per_day, deck=deck
        )
    return due.item.key if due else None


def status_at(
    database: Database, learner: Learner, snapshot: Snapshot, now: datetime, new_per_day: int = 20
) -> practice.QueueStatus:
    with database.session() as session:
        return practice.queue_status(
            session, learner, snapshot=snapshot, now=now, new_per_day=new_per_day
        )


def log_count(database: Database) -> int:
    with database.session() as session:
        return session.scalar(select(func.count()).select_from(ReviewLog)) or 0


def stored(database: Database, learner: Learner) -> dict[tuple[str, str], practice.Schedule]:
    with database.session() as session:
        return practice.load_schedules(session, learner.user_id)


def test_new_items_come_in_content_order_answer_before_follow_ups(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    seen = []
    now = T0
    for _ in ORDER:
        key = next_key(database, learner, snapshot, now)
        assert key is not None
        seen.append(key)
        grade(snapshot, key, Rating.EASY, now)
        now += timedelta(seconds=30)
    assert seen == ORDER
    assert next_key(database, learner, snapshot, now) is None


def test_a_follow_up_keeps_its_own_schedule(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-other", Rating.EASY, T0)
    grade(snapshot, "test-other/why-exp", Rating.AGAIN, T0)
    states = stored(database, learner)
    answer, follow_up = states[("test-other", "")], states[("test-other", "why-exp")]
    assert answer.due - T0 >= timedelta(days=1)
    assert follow_up.due - T0 < timedelta(hours=1)
    # Ten minutes later the follow-up is due again and its card is not.
    later = T0 + timedelta(minutes=10)
    assert next_key(database, learner, snapshot, later, new_per_day=0) == "test-other/why-exp"


def test_items_due_come_before_new_ones_earliest_first(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-other", Rating.AGAIN, T0)
    grade(snapshot, "test-scaling", Rating.AGAIN, T0 + timedelta(seconds=5))
    later = T0 + timedelta(hours=1)
    assert next_key(database, learner, snapshot, later) == "test-other"
    grade(snapshot, "test-other", Rating.EASY, later)
    assert next_key(database, learner, snapshot, later) == "test-scaling"


def test_the_daily_limit_stops_new_items_until_the_next_day(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    for key in ORDER[:2]:
        grade(snapshot, key, Rating.EASY, T0)
    assert next_key(database, learner, snapshot, T0, new_per_day=2) is None
    status = status_at(database, learner, snapshot, T0, new_per_day=2)
    assert (status.new_left_today, status.new_waiting, status.new_limit_reached) == (0, 3, True)
    assert status.next_due is not None and status.next_due > T0
    tomorrow = T0 + timedelta(days=1, hours=-8)  # 01:00 the next day (UTC)
    assert next_key(database, learner, snapshot, tomorrow, new_per_day=2) == "test-scaling"


def test_the_day_ends_in_the_learners_time_zone(
    database: Database, snapshot: Snapshot, grade: Grader
) -> None:
    from zoneinfo import ZoneInfo

    tokyo = Learner(grade.learner.user_id, ZoneInfo("Asia/Tokyo"))
    late = datetime(2025, 3, 3, 14, 30, tzinfo=UTC)  # 23:30 in Tokyo
    grade(snapshot, "test-other", Rating.EASY, late)
    after_midnight = late + timedelta(hours=1)  # 00:30 the next day in Tokyo, still the 3rd in UTC
    with database.session() as session:
        due, status = practice.next_item(
            session, tokyo, snapshot=snapshot, now=after_midnight, new_per_day=1
        )
    assert due is not None and due.item.key == "test-other/why-exp"
    assert status.new_left_today == 1


def test_each_grade_button_shows_the_interval_that_grade_gives(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    scheduler = Scheduler()
    now = T0
    for rating in [Rating.GOOD, Rating.GOOD, Rating.GOOD, Rating.HARD]:
        item = practice.find_item(snapshot, "test-scaling")
        with database.session() as session:
            before = practice.current_schedule(session, learner.user_id, item, now)
        promised = scheduler.preview(before, now, seed=item.key)[rating]
        graded = grade(snapshot, "test-scaling", rating, now)
        assert graded.schedule is not None
        assert graded.schedule.due - now == promised
        now = graded.schedule.due + timedelta(hours=2)
    assert promised > timedelta(days=3)  # long enough for fuzz to apply, deterministically


def test_a_stale_form_records_nothing(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-other", Rating.GOOD, T0)
    before = stored(database, learner)
    item = practice.find_item(snapshot, "test-other")
    with database.session() as session, pytest.raises(StaleItem, match="was graded since"):
        practice.grade(
            session,
            learner,
            item=item,
            rating=Rating.EASY,
            version=0,  # shown before the first grade
            token=practice.new_token(),
            now=T0 + timedelta(minutes=1),
            scheduler=Scheduler(),
        )
    assert stored(database, learner) == before
    assert log_count(database) == 1


def test_a_replayed_form_records_nothing(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    item = practice.find_item(snapshot, "test-other")
    token = practice.new_token()

    def send(version: int) -> practice.Graded:
        with database.session() as session:
            return practice.grade(
                session,
                learner,
                item=item,
                rating=Rating.GOOD,
                version=version,
                token=token,
                now=T0,
                scheduler=Scheduler(),
            )

    send(0)
    before = stored(database, learner)
    for version in (0, 1):  # the same post again, and with the version bumped by hand
        with pytest.raises(AlreadyRecorded, match="already recorded"):
            send(version)
    assert stored(database, learner) == before
    assert log_count(database) == 1


def test_an_unknown_item_says_what_is_missing(snapshot: Snapshot) -> None:
    with pytest.raises(UnknownItem, match="no card has the id 'nope'"):
        practice.find_item(snapshot, "nope")
    with pytest.raises(
        UnknownItem, match=r"has no follow-up 'nope' \(its follow-ups: why-sqrt, flash\)"
    ):
        practice.find_item(snapshot, "test-scaling/nope")


def test_practice_is_logged_but_does_not_move_the_schedule(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    for key in ORDER:
        grade(snapshot, key, Rating.GOOD, T0)
    before = stored(database, learner)
    graded = grade(snapshot, "test-other", Rating.AGAIN, T0 + timedelta(minutes=30), practice=True)
    assert graded.schedule is None
    assert stored(database, learner) == before
    with database.session() as session:
        practised = session.scalars(select(ReviewLog.practice).order_by(ReviewLog.id)).all()
    assert practised == [False] * len(ORDER) + [True]


def test_practice_walks_items_soonest_due_first_then_unreviewed_ones(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-scaling", Rating.EASY, T0)  # due in days
    grade(snapshot, "test-other", Rating.AGAIN, T0)  # due in a minute
    walked = []
    cursor = ""
    with database.session() as session:
        while True:
            due = practice.next_practice(session, learner, snapshot=snapshot, now=T0, after=cursor)
            if due is None:
                break
            walked.append((due.item.key, due.is_new))
            cursor = due.cursor
    assert walked == [
        ("test-other", False),
        ("test-scaling", False),
        ("test-other/why-exp", True),
        ("test-scaling/why-sqrt", True),
        ("test-scaling/flash", True),
    ]


def test_the_deck_filter_serves_only_that_deck(
    database: Database, learner: Learner, content_dir: Path, grade: Grader
) -> None:
    other_deck = content_dir / "otherdeck"
    other_deck.mkdir()
    (other_deck / "moved.md").write_text(
        OTHER_CARD.replace("id: test-other", "id: test-third").replace(
            "deck: testdeck", "deck: otherdeck"
        )
    )
    snapshot = Library(content_dir).load()
    assert next_key(database, learner, snapshot, T0, deck="otherdeck") == "test-third"
    assert next_key(database, learner, snapshot, T0, deck="testdeck") == "test-other"
    grade(snapshot, "test-third", Rating.AGAIN, T0)
    later = T0 + timedelta(hours=1)
    assert next_key(database, learner, snapshot, later, deck="testdeck") == "test-other"
    assert next_key(database, learner, snapshot, later) == "test-third"


def test_rewording_moving_and_reordering_keep_each_items_history(
    database: Database, learner: Learner, content_dir: Path, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-scaling/why-sqrt", Rating.EASY, T0)
    grade(snapshot, "test-scaling/flash", Rating.AGAIN, T0)
    before = stored(database, learner)
    # Reword the question and title, swap the two follow-ups, move the card to a new deck.
    why, flash = GOOD_CARD.index("### Why the square root?"), GOOD_CARD.index("### What does Flash")
    end = GOOD_CARD.index("## Red flags")
    text = GOOD_CARD[:why] + GOOD_CARD[flash:end] + GOOD_CARD[why:flash] + GOOD_CARD[end:]
    text = text.replace("title: The scaling factor", "title: Scaling, reworded")
    text = text.replace("deck: testdeck", "deck: movedeck")
    text = text.replace(
        "### Why the square root? {#why-sqrt}", "### Why a root at all? {#why-sqrt}"
    )
    (content_dir / "testdeck" / "scaling.md").unlink()
    (content_dir / "movedeck").mkdir()
    (content_dir / "movedeck" / "scaling.md").write_text(text)
    moved = Library(content_dir).load()
    assert [f.key for f in moved.cards["test-scaling"].follow_ups] == ["flash", "why-sqrt"]
    assert stored(database, learner) == before
    later = T0 + timedelta(hours=1)
    assert next_key(database, learner, moved, later, new_per_day=0) == "test-scaling/flash"
    assert next_key(database, learner, moved, later, new_per_day=0, deck="movedeck") == (
        "test-scaling/flash"
    )


def test_items_of_a_removed_card_are_archived_not_served(
    database: Database, learner: Learner, content_dir: Path, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-scaling", Rating.AGAIN, T0)
    grade(snapshot, "test-other", Rating.AGAIN, T0 + timedelta(seconds=1))
    (content_dir / "testdeck" / "scaling.md").unlink()
    smaller = Library(content_dir).load()
    later = T0 + timedelta(hours=1)
    assert next_key(database, learner, smaller, later, new_per_day=0) == "test-other"
    status = status_at(database, learner, smaller, later, new_per_day=0)
    assert status.due_now == 1
    assert ("test-scaling", "") in stored(database, learner)  # kept, for the stats


def test_the_rebuilt_schedule_equals_the_live_one(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    ratings = [Rating.GOOD, Rating.AGAIN, Rating.GOOD, Rating.HARD, Rating.EASY, Rating.GOOD]
    now = T0
    for step, rating in enumerate(ratings * 3):
        key = ORDER[step % len(ORDER)]
        grade(snapshot, key, rating, now, answer=f"answer {step}")
        if step % 4 == 0:
            grade(snapshot, key, Rating.AGAIN, now + timedelta(seconds=1), practice=True)
        now += timedelta(hours=7, minutes=step)
    live = stored(database, learner)
    assert len(live) == len(ORDER)
    with database.session() as session:
        assert practice.replay_log(session, learner.user_id, Scheduler()) == live
        rebuilt = practice.rebuild_schedule(session, learner.user_id, Scheduler())
        session.commit()
    assert (rebuilt.items, rebuilt.changed) == (len(ORDER), [])
    assert stored(database, learner) == live


def test_rebuild_repairs_a_damaged_schedule(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-other", Rating.GOOD, T0)
    live = stored(database, learner)
    with database.session() as session:
        session.execute(ReviewItem.__table__.update().values(stability=99.0))  # type: ignore[attr-defined]
        session.commit()
        rebuilt = practice.rebuild_schedule(session, learner.user_id, Scheduler())
        session.commit()
    assert rebuilt.changed == ["test-other"]
    assert stored(database, learner) == live

"""Mock interviews, below the web: the plan, the clock, saving answers, grading, export.

Every test runs on SQLite, and on PostgreSQL too when QUIZLAB_TEST_DATABASE_URL
names one.
"""

import doctest
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select, text
from sqlmodel import col

from app.content.library import Library, Snapshot
from app.practice import interview, progress
from app.practice.activity import Learner
from app.practice.errors import InterviewError, RoundConflict, UnknownRound
from app.practice.interview import Marks, Request, scoring
from app.practice.scheduling import Scheduler
from app.storage.database import Database
from app.storage.models import InterviewAnswer, ReviewItem, ReviewLog, User
from tests.conftest import Grader

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALL = Request(decks=(), weakest=False, mix="mixed", minutes=15)
ONE_CARD = Request(decks=(), weakest=False, mix="harder", minutes=15)  # test-scaling is medium


def keys(found: interview.Round) -> list[str]:
    return [q.item.key for q in found.questions if q.item is not None]


def start(database: Database, learner: Learner, snapshot: Snapshot, request: Request) -> str:
    with database.session() as session:
        return interview.start(session, learner, snapshot, request, now=T0)


def load(database: Database, learner: Learner, snapshot: Snapshot, uid: str) -> interview.Round:
    with database.session() as session:
        return interview.load(session, learner, snapshot, uid)


def advance(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    uid: str,
    position: int,
    answer: str,
    at: datetime,
    *,
    finish: bool = False,
) -> None:
    with database.session() as session:
        interview.advance(
            session, learner, snapshot, uid, position=position, text=answer, now=at, finish=finish
        )


def test_scoring_examples_hold() -> None:
    failures, tried = doctest.testmod(scoring)
    assert tried and not failures


# -- The plan ------------------------------------------------------------------


def test_a_round_asks_each_card_then_its_follow_ups_within_its_length(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    found = load(database, learner, snapshot, start(database, learner, snapshot, ALL))
    # Never practised: both cards, in an order drawn from the round; each main
    # question is followed by its follow-ups (4 + 2 + 2 and 2 + 1 minutes: 11 of 15).
    by_card = {q.card_id: [] for q in found.questions}
    for question in found.questions:
        by_card[question.card_id].append((question.follow_up, question.minutes))
    assert by_card == {
        "test-scaling": [("", 4), ("why-sqrt", 2), ("flash", 2)],
        "test-other": [("", 2), ("why-exp", 1)],
    }
    assert found.questions[0].follow_up == "" and found.questions[0].asked_at == T0
    assert all(q.asked_at is None for q in found.questions[1:])
    assert found.row.ends_at == T0 + timedelta(minutes=15)
    assert found.state == "answering" and found.current == found.questions[0]


def test_follow_ups_missed_before_are_asked_first(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-scaling/why-sqrt", 4, T0 - timedelta(days=3))
    grade(snapshot, "test-scaling/flash", 1, T0 - timedelta(days=3))
    found = load(database, learner, snapshot, start(database, learner, snapshot, ONE_CARD))
    assert keys(found) == ["test-scaling", "test-scaling/flash", "test-scaling/why-sqrt"]


def test_a_lapsed_follow_up_comes_before_one_never_graded(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    # why-sqrt: learnt, then forgotten (a lapse), though its mean grade is high.
    for days, rating in ((30, 4), (20, 4), (5, 1)):
        grade(snapshot, "test-scaling/why-sqrt", rating, T0 - timedelta(days=days))
    with database.session() as session:
        lapses = session.scalar(
            select(col(ReviewItem.lapses)).where(col(ReviewItem.follow_up) == "why-sqrt")
        )
    assert lapses == 1
    found = load(database, learner, snapshot, start(database, learner, snapshot, ONE_CARD))
    assert keys(found)[1:] == ["test-scaling/why-sqrt", "test-scaling/flash"]


def test_my_weakest_asks_the_card_with_the_lowest_retention_first(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    grade(snapshot, "test-scaling", 1, T0 - timedelta(days=2))  # 0% recalled
    grade(snapshot, "test-other", 3, T0 - timedelta(days=2))  # 100%
    weakest = Request(decks=(), weakest=True, mix="mixed", minutes=15)
    for _ in range(3):  # not a lucky draw
        found = load(database, learner, snapshot, start(database, learner, snapshot, weakest))
        assert found.questions[0].card_id == "test-scaling"


def test_a_short_round_keeps_one_follow_up_per_card(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    found = load(database, learner, snapshot, start(database, learner, snapshot, ONE_CARD))
    assert len(found.questions) == 3
    longer = snapshot.cards["test-scaling"]
    assert interview.follow_up_minutes(longer) == 2


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (Request(("nope",), False, "mixed", 15), "There is no deck called 'nope'"),
        (Request((), False, "brutal", 15), "The mix must be one of mixed, easier, harder"),
        (Request((), False, "mixed", 20), "A round lasts 15, 30, 45 minutes, not 20"),
    ],
)
def test_a_bad_request_says_what_to_choose(
    database: Database, learner: Learner, snapshot: Snapshot, request_: Request, message: str
) -> None:
    with pytest.raises(InterviewError, match=message):
        start(database, learner, snapshot, request_)


def test_a_mix_no_card_matches_says_so(
    database: Database, learner: Learner, content_dir: Path
) -> None:
    (content_dir / "testdeck" / "scaling.md").unlink()  # only an easy card is left
    snapshot = Library(content_dir).load()
    with pytest.raises(InterviewError, match="No card in testdeck is medium or hard"):
        start(database, learner, snapshot, ONE_CARD)


# -- Answering under the clock ---------------------------------------------------


def test_every_save_is_appended_and_the_latest_is_the_answer(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    with database.session() as session:
        first = interview.save(session, learner, snapshot, uid, position=0, text="Div", now=T0)
        again = interview.save(session, learner, snapshot, uid, position=0, text="Div", now=T0)
        later = T0 + timedelta(seconds=30)
        last = interview.save(session, learner, snapshot, uid, position=0, text="Divide", now=later)
    assert (first.changed, again.changed, last.changed) == (True, False, True)
    assert again.at == T0 and last.at == later
    found = load(database, learner, snapshot, uid)
    assert found.questions[0].answer == "Divide" and found.questions[0].saved_at == later
    with database.session() as session:
        saved = session.scalars(select(col(InterviewAnswer.text)).order_by(InterviewAnswer.id))
        assert list(saved) == ["Div", "Divide"]


def test_next_times_each_question_from_the_server_clock(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    advance(database, learner, snapshot, uid, 0, "sqrt d_k", T0 + timedelta(minutes=3))
    found = load(database, learner, snapshot, uid)
    first, second = found.questions[:2]
    assert first.answered_at == second.asked_at == T0 + timedelta(minutes=3)
    assert first.seconds(T0 + timedelta(hours=1)) == 180 and first.in_time(T0)
    assert found.current == second and second.answer == ""
    advance(database, learner, snapshot, uid, 1, "std grows", T0 + timedelta(minutes=5))
    advance(database, learner, snapshot, uid, 2, "", T0 + timedelta(minutes=6))
    done = load(database, learner, snapshot, uid)
    assert done.state == "grading" and done.current is None
    assert done.row.finished_at == T0 + timedelta(minutes=6)
    assert done.seconds_used(T0 + timedelta(hours=2)) == 360


def test_ending_early_or_running_out_of_time_finishes_the_round(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    early = start(database, learner, snapshot, ALL)
    advance(database, learner, snapshot, early, 0, "a", T0 + timedelta(minutes=1), finish=True)
    found = load(database, learner, snapshot, early)
    assert found.state == "grading" and len(found.reached) == 1

    late = start(database, learner, snapshot, ALL)
    advance(database, learner, snapshot, late, 0, "slow", T0 + timedelta(minutes=16))
    found = load(database, learner, snapshot, late)
    assert found.state == "grading" and len(found.reached) == 1  # no new question after time
    assert not found.questions[0].in_time(T0 + timedelta(minutes=16))


def test_a_stale_or_finished_form_saves_nothing(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    advance(database, learner, snapshot, uid, 0, "first", T0 + timedelta(minutes=1))
    with pytest.raises(RoundConflict, match="Question 1 is not the one being asked"):
        advance(database, learner, snapshot, uid, 0, "again", T0 + timedelta(minutes=2))
    advance(database, learner, snapshot, uid, 1, "x", T0 + timedelta(minutes=2), finish=True)
    with database.session() as session, pytest.raises(RoundConflict, match="round is over"):
        interview.save(session, learner, snapshot, uid, position=1, text="y", now=T0)
    found = load(database, learner, snapshot, uid)
    assert [q.answer for q in found.questions] == ["first", "x", ""]


def test_an_answer_over_the_limit_is_refused_with_the_limit(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    with database.session() as session, pytest.raises(InterviewError) as refused:
        interview.save(session, learner, snapshot, uid, position=0, text="x" * 20_001, now=T0)
    assert str(refused.value).startswith(
        "An answer can be at most 20,000 characters; this one has 20,001."
    )
    assert load(database, learner, snapshot, uid).questions[0].saved_at is None


def test_someone_elses_round_is_unknown(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    with database.session() as session:
        other = User(name="other", created_at=T0)
        session.add(other)
        session.commit()
        assert other.id is not None
        stranger = Learner(other.id, ZoneInfo("UTC"))
        with pytest.raises(UnknownRound):
            interview.load(session, stranger, snapshot, uid)
        with pytest.raises(UnknownRound):
            interview.save(session, stranger, snapshot, uid, position=0, text="x", now=T0)
        with pytest.raises(UnknownRound):
            interview.load(session, learner, snapshot, "0" * 32)


# -- Grading ---------------------------------------------------------------------


def answered(database: Database, learner: Learner, snapshot: Snapshot) -> str:
    """A finished one-card round: 3 min, 1 min (over its 2) and 1 min per question."""
    uid = start(database, learner, snapshot, ONE_CARD)
    advance(database, learner, snapshot, uid, 0, "divide by sqrt d_k", T0 + timedelta(minutes=3))
    advance(database, learner, snapshot, uid, 1, "std", T0 + timedelta(minutes=6))
    advance(database, learner, snapshot, uid, 2, "", T0 + timedelta(minutes=7))
    return uid


MARKS = {
    0: Marks(points=frozenset({0, 1})),  # 2 of 3 key points: 67
    1: Marks(coverage=3, red_flags=frozenset({"tuned"})),  # all of it, one red flag: 75
    2: Marks(coverage=0),  # nothing: 0
}


def grade_round(
    database: Database, learner: Learner, snapshot: Snapshot, uid: str, marks: dict[int, Marks]
) -> None:
    with database.session() as session:
        interview.grade_round(
            session, learner, snapshot, uid, marks, scheduler=Scheduler(), now=T0 + timedelta(1)
        )


def test_grading_scores_each_question_and_feeds_each_item_to_the_schedule(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = answered(database, learner, snapshot)
    grade_round(database, learner, snapshot, uid, MARKS)
    found = load(database, learner, snapshot, uid)
    graded = [interview.graded_question(q) for q in found.questions]
    assert [(g.score, g.rating.label) for g in graded if g] == [
        (67, "Hard"),
        (75, "Hard"),
        (0, "Again"),
    ]
    first = graded[0]
    assert first is not None and first.missed == ("Unscaled scores saturate the softmax",)
    assert graded[1] is not None and graded[1].red_flags == (("tuned", "Saying it is tuned"),)
    assert graded[1].coverage == "All of it"
    assert found.state == "graded" and found.row.score == 47
    with database.session() as session:
        log = session.execute(
            select(
                ReviewLog.card_id, ReviewLog.follow_up, ReviewLog.rating, ReviewLog.uid
            ).order_by(ReviewLog.id)
        ).all()
        items = session.scalar(select(func.count()).select_from(ReviewItem))
    flash_or_sqrt = [q.follow_up for q in found.questions[1:]]
    assert [(c, f, r) for c, f, r, _ in log] == [
        ("test-scaling", "", 2),
        ("test-scaling", flash_or_sqrt[0], 2),
        ("test-scaling", flash_or_sqrt[1], 1),
    ]
    assert [u for *_, u in log] == [interview.review_uid(uid, n) for n in range(3)]
    assert items == 3


def test_a_round_graded_twice_counts_once(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = answered(database, learner, snapshot)
    grade_round(database, learner, snapshot, uid, MARKS)
    with pytest.raises(RoundConflict, match="graded already"):
        grade_round(database, learner, snapshot, uid, {0: Marks(points=frozenset({0, 1, 2}))})
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(ReviewLog)) == 3
    assert load(database, learner, snapshot, uid).row.score == 47


def test_grading_refuses_a_round_still_being_answered_and_bad_ticks(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    with pytest.raises(RoundConflict, match="still being answered"):
        grade_round(database, learner, snapshot, uid, {})
    uid = answered(database, learner, snapshot)
    with pytest.raises(InterviewError, match="Question 2 \\(a follow-up\\): choose how much"):
        grade_round(database, learner, snapshot, uid, {0: Marks()})
    with pytest.raises(InterviewError, match="Question 1: 'nope' is not one of the card's"):
        grade_round(database, learner, snapshot, uid, {0: Marks(red_flags=frozenset({"nope"}))})
    with pytest.raises(InterviewError, match="a ticked key point is not on the card"):
        grade_round(database, learner, snapshot, uid, {**MARKS, 0: Marks(points=frozenset({3}))})
    with database.session() as session:  # nothing half-written
        assert session.scalar(select(func.count()).select_from(ReviewLog)) == 0
    assert load(database, learner, snapshot, uid).state == "grading"


def test_the_report_lists_what_was_missed_and_what_to_practise(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = answered(database, learner, snapshot)
    grade_round(database, learner, snapshot, uid, MARKS)
    with database.session() as session:
        found = interview.load(session, learner, snapshot, uid)
        report = interview.build_report(session, learner, snapshot, found)
        past = interview.past_rounds(session, learner)
    assert [(o.text, o.count) for o in report.missed_often] == [
        ("Unscaled scores saturate the softmax", 1)
    ]
    assert [(o.text, o.card_id) for o in report.red_flags_hit] == [
        ("Saying it is tuned", "test-scaling")
    ]
    assert [card.id for card in report.practise_next] == ["test-scaling"]
    assert [(p.uid, p.score, p.questions, p.graded) for p in past] == [(uid, 47, 3, True)]


# -- Export and import -------------------------------------------------------------


def test_rounds_travel_in_the_progress_file_and_import_once(
    database: Database, learner: Learner, snapshot: Snapshot, tmp_path: Path
) -> None:
    uid = answered(database, learner, snapshot)
    grade_round(database, learner, snapshot, uid, MARKS)
    start(database, learner, snapshot, ALL)  # one still being answered travels too
    with database.session() as session:
        exported = "".join(progress.export(session, learner.user_id))
    data = json.loads(exported)
    assert [r["uid"] for r in data["interviews"]][:1] == [uid]
    assert data["interviews"][0]["questions"][0]["answer"] == "divide by sqrt d_k"

    fresh = Database(f"sqlite:///{tmp_path / 'fresh.sqlite3'}")
    fresh.upgrade()
    try:
        other = Learner(fresh.local_user_id, ZoneInfo("UTC"))
        parsed = progress.parse(exported)
        with fresh.session() as session:
            first = progress.import_file(session, other, parsed, scheduler=Scheduler())
            second = progress.import_file(session, other, parsed, scheduler=Scheduler())
        assert (first.rounds_added, first.reviews_added) == (2, 3)
        assert (second.rounds_added, second.rounds_skipped, second.reviews_added) == (0, 2, 0)
        assert "2 mock interview round(s)" in str(first)
        copy = load(fresh, other, snapshot, uid)
        assert copy.state == "graded" and copy.row.score == 47
        assert [q.answer for q in copy.questions] == ["divide by sqrt d_k", "std", ""]
        with fresh.session() as session:
            again = "".join(progress.export(session, other.user_id))
            items = session.scalar(select(func.count()).select_from(ReviewItem))
        assert json.loads(again)["interviews"] == data["interviews"]
        assert items == 3  # the schedule was rebuilt from the imported reviews
    finally:
        fresh.dispose()


def test_an_older_export_without_rounds_still_imports(database: Database, learner: Learner) -> None:
    parsed = progress.parse('{"format": "quizlab-progress", "version": 1, "reviews": []}')
    assert parsed.interviews == []


def test_answers_are_append_only_in_the_database(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    uid = start(database, learner, snapshot, ONE_CARD)
    with database.session() as session:
        interview.save(session, learner, snapshot, uid, position=0, text="kept", now=T0)
    with pytest.raises(Exception, match="append-only"), database.engine.begin() as connection:
        connection.execute(text("UPDATE interview_answer SET text = 'changed'"))

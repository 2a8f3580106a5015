"""The stats: running totals that match the logs, the numbers shown, and charts with text."""

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import select

from app import practice
from app.content.library import Library, Snapshot
from app.practice import activity, progress, stats
from app.practice.activity import Learner
from app.practice.scheduling import Rating
from app.storage.database import Database
from app.storage.models import CardActivity, DailyActivity
from tests.conftest import Grader

NOW = datetime(2025, 3, 12, 18, 0, tzinfo=UTC)


def totals(database: Database) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with database.session() as session:
        days = session.execute(
            select(
                DailyActivity.day,
                DailyActivity.reviews,
                DailyActivity.recalled,
                DailyActivity.choices,
                DailyActivity.choices_correct,
            ).order_by(DailyActivity.day)
        ).all()
        cards = session.execute(
            select(
                CardActivity.card_id,
                CardActivity.answer_reviews,
                CardActivity.answer_recalled,
                CardActivity.follow_up_reviews,
                CardActivity.follow_up_recalled,
                CardActivity.choices,
                CardActivity.choices_correct,
                CardActivity.last_activity,
            ).order_by(CardActivity.card_id)
        ).all()
    return [tuple(r) for r in days], [tuple(r) for r in cards]


def history(database: Database, learner: Learner, snapshot: Snapshot, grade: Grader) -> None:
    """Five days of practice ending today, with a gap before them; reviews and choices."""
    quiz = snapshot.cards["test-scaling"].multiple_choice
    assert quiz is not None
    for back in [9, 4, 3, 2, 1, 0]:
        day = NOW - timedelta(days=back, hours=2)
        grade(snapshot, "test-other", Rating.GOOD, day)
        grade(snapshot, "test-scaling/why-sqrt", Rating.AGAIN if back % 2 else Rating.HARD, day)
        with database.session() as session:
            progress.record_choice(
                session, learner, card_id="test-scaling", choice=quiz.choices[back % 2], now=day
            )
    grade(snapshot, "test-scaling", Rating.EASY, NOW - timedelta(hours=1), practice=True)


def test_running_totals_equal_the_ones_rebuilt_from_the_logs(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    history(database, learner, snapshot, grade)
    kept = totals(database)
    with database.session() as session:
        activity.rebuild(session, learner)
        session.commit()
    assert totals(database) == kept
    days, cards = kept
    assert sum(int(d[1]) for d in days) == 13  # type: ignore[call-overload]
    assert [c[0] for c in cards] == ["test-other", "test-scaling"]


def test_the_numbers_on_the_stats_page(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    history(database, learner, snapshot, grade)
    with database.session() as session:
        found = stats.build(session, learner, snapshot=snapshot, now=NOW)
    assert (found.streak, found.longest_streak) == (5, 5)
    assert found.reviews_today == 4  # two reviews, one choice, one practice review
    assert found.recent_reviews == 13
    # Recalled: every Good, the Hard ones (back 4, 2, 0) and the practice Easy.
    assert found.recent_retention == stats.Accuracy(13, 6 + 3 + 1)
    [deck] = [d for d in found.decks if d.name == "testdeck"]
    assert deck.answers == stats.Accuracy(7, 7)
    assert deck.follow_ups == stats.Accuracy(6, 3)
    assert deck.choices == stats.Accuracy(6, 3)  # the correct option is "b", index 1
    assert found.total.overall == stats.Accuracy(19, 13)
    assert found.archived == []
    with database.session() as session:
        dues = sorted(s.due for s in practice.load_schedules(session, learner.user_id).values())
    horizon = datetime(2025, 3, 26, tzinfo=UTC)
    assert found.forecast_total == sum(due < horizon for due in dues) == 1
    assert [day for day, _ in found.forecast][:2] == [date(2025, 3, 12), date(2025, 3, 13)]
    assert len(found.forecast) == 14
    cells = [cell for week in found.heatmap.weeks for cell in week if cell]
    assert cells[-1].day.day == date(2025, 3, 12) and cells[-1].day.activity == 4
    assert cells[-1].level == stats.HEAT_LEVELS
    assert found.heatmap.active_days == 6


def test_a_removed_card_shows_as_archived(
    database: Database, learner: Learner, content_dir: Path, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    history(database, learner, snapshot, grade)
    (content_dir / "testdeck" / "scaling.md").unlink()
    smaller = Library(content_dir).load()
    with database.session() as session:
        found = stats.build(session, learner, snapshot=smaller, now=NOW)
    assert [d.name for d in found.decks] == ["testdeck", "Archived cards"]
    assert found.decks[-1].archived
    assert found.decks[-1].follow_ups == stats.Accuracy(6, 3)
    [card] = found.archived
    assert (card.card_id, card.reviews, card.choices) == ("test-scaling", 7, 6)
    assert found.forecast_total == 0  # the one item due soon was test-scaling's: archived


@pytest.mark.parametrize(
    ("active", "today", "expected"),
    [
        ([], date(2025, 3, 12), (0, 0)),
        ([date(2025, 3, 10), date(2025, 3, 11)], date(2025, 3, 12), (2, 2)),  # today still open
        ([date(2025, 3, 9), date(2025, 3, 10)], date(2025, 3, 12), (0, 2)),  # a whole day missed
        (
            [date(2025, 3, 1), date(2025, 3, 2), date(2025, 3, 3), date(2025, 3, 12)],
            date(2025, 3, 12),
            (1, 3),
        ),
    ],
)
def test_streaks(active: list[date], today: date, expected: tuple[int, int]) -> None:
    assert stats._streaks(active, today) == expected


def test_the_stats_page_has_charts_with_text_alternatives(db_client: TestClient) -> None:
    db_client.post("/cards/test-scaling/choice", data={"choice": "b"})
    page = BeautifulSoup(db_client.get("/stats").text, "html.parser")
    assert page.select_one("h1").get_text() == "Stats"  # type: ignore[union-attr]
    charts = page.select("svg[role=img]")
    assert len(charts) == 3
    for chart in charts:
        label_ids = str(chart["aria-labelledby"]).split()
        texts = [page.find(id=i).get_text().strip() for i in label_ids]  # type: ignore[union-attr]
        assert len(texts) == 2 and all(texts), chart
    # Each chart is followed by its numbers as a table.
    captions = [c.get_text() for c in page.select("details.chart-table table caption")]
    assert captions[0] == "Answers (reviews and multiple choice) by month"
    assert len(captions) == 3
    today_row = page.select("details.chart-table")[2].select("tbody tr")[0]
    assert today_row.th.get_text() == "Today"  # type: ignore[union-attr]
    accuracy = page.select_one("table.accuracy")
    assert accuracy is not None
    row = [" ".join(c.get_text().split()) for c in accuracy.select("tbody tr")[0].select("th, td")]
    assert row == ["Testdeck", "—no answers yet", "—no answers yet", "100% 1/1", "100% 1/1"]
    download = page.select_one("a[download]")
    assert download is not None and download["href"] == "/progress"

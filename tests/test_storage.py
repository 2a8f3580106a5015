"""Progress is stored for real: it survives a restart, and concurrent grades lose nothing."""

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bs4 import BeautifulSoup
from sqlalchemy import func, select

from app import practice
from app.content.library import Snapshot
from app.practice import ReviewConflict
from app.practice.activity import Learner
from app.practice.scheduling import Rating, Scheduler
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import CardActivity, DailyActivity, ReviewItem, ReviewLog
from app.web import create_app
from tests.conftest import CSRFClient

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def shown_form(html: str, selector: str) -> dict[str, str]:
    form = BeautifulSoup(html, "html.parser").select_one(selector)
    assert form is not None, f"no {selector} on the page"
    return {str(i["name"]): str(i.get("value", "")) for i in form.select("input[type=hidden]")}


def test_a_review_survives_restarting_the_app(settings: Settings) -> None:
    with CSRFClient(create_app(settings)) as client:
        first = shown_form(client.get("/review").text, "form.answer-form")
        revealed = client.post("/review/reveal", data={**first, "answer": "exp then divide"})
        grade = shown_form(revealed.text, "form.grade-form")
        response = client.post(
            "/review/grade", data={**grade, "rating": "3"}, follow_redirects=False
        )
        assert response.status_code == 303
    database_file = settings.data_dir / "quizlab.sqlite3"
    assert database_file.exists()

    with CSRFClient(create_app(settings)) as client:
        after = shown_form(client.get("/review").text, "form.answer-form")
        assert after["item"] != first["item"]  # the graded item is scheduled, not shown again
        stats = BeautifulSoup(client.get("/stats").text, "html.parser")
        assert "1 review" in stats.select_one(".stat-tiles").get_text(" ")  # type: ignore[union-attr]
        exported = client.get("/progress").json()
    assert [r["answer"] for r in exported["reviews"]] == ["exp then divide"]


def run_together(jobs: list[object]) -> list[str]:
    """Start the jobs at the same instant in threads; each returns 'ok' or 'conflict'."""
    barrier = threading.Barrier(len(jobs))
    results: list[str] = []
    lock = threading.Lock()

    def run(job: object) -> None:
        barrier.wait()
        try:
            job()  # type: ignore[operator]
            outcome = "ok"
        except ReviewConflict:
            outcome = "conflict"
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return sorted(results)


def grade_job(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    key: str,
    *,
    version: int,
    token: str,
    at: datetime,
) -> object:
    def job() -> None:
        with database.session() as session:
            practice.grade(
                session,
                learner,
                item=practice.find_item(snapshot, key),
                rating=Rating.GOOD,
                version=version,
                token=token,
                now=at,
                scheduler=Scheduler(),
            )

    return job


def counts(database: Database) -> tuple[int, int, int]:
    with database.session() as session:
        logs = session.scalar(select(func.count()).select_from(ReviewLog)) or 0
        version = session.scalar(select(func.sum(ReviewItem.version))) or 0
        daily = session.scalar(select(func.sum(DailyActivity.reviews))) or 0
    return logs, version, daily


def test_two_grades_of_one_shown_item_record_exactly_one_each_round(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    rounds = 4
    for n in range(rounds):
        at = T0 + timedelta(days=3 * n)
        jobs = [
            grade_job(
                database,
                learner,
                snapshot,
                "test-other",
                version=n,
                token=practice.new_token(),
                at=at,
            )
            for _ in range(2)
        ]
        assert run_together(jobs) == ["conflict", "ok"], f"round {n}"
    assert counts(database) == (rounds, rounds, rounds)


def test_a_double_submitted_form_records_one_review(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    token = practice.new_token()
    job = grade_job(database, learner, snapshot, "test-scaling", version=0, token=token, at=T0)
    assert run_together([job, job, job]) == ["conflict", "conflict", "ok"]
    assert counts(database) == (1, 1, 1)


def test_grades_of_different_items_at_once_all_count(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    keys = [
        "test-other",
        "test-other/why-exp",
        "test-scaling",
        "test-scaling/why-sqrt",
        "test-scaling/flash",
    ]
    jobs = [
        grade_job(database, learner, snapshot, key, version=0, token=practice.new_token(), at=T0)
        for key in keys
    ]
    assert run_together(jobs) == ["ok"] * len(keys)
    assert counts(database) == (5, 5, 5)
    with database.session() as session:
        per_card = {
            row.card_id: (row.answer_reviews, row.follow_up_reviews)
            for row in session.scalars(select(CardActivity))
        }
    assert per_card == {"test-other": (1, 1), "test-scaling": (1, 2)}


def test_the_default_database_is_a_file_in_the_data_folder(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "nested" / "data")
    assert settings.resolved_database_url == (
        f"sqlite:///{(tmp_path / 'nested' / 'data' / 'quizlab.sqlite3').resolve()}"
    )
    database = Database(settings.resolved_database_url)
    try:
        database.upgrade()
    finally:
        database.dispose()
    assert (tmp_path / "nested" / "data" / "quizlab.sqlite3").exists()

"""Export and import of a learner's progress: the module, the command line and the stats page."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import func, select

from app import practice
from app.content.library import Library, Snapshot
from app.practice import progress
from app.practice.activity import Learner
from app.practice.progress import ProgressFileError
from app.practice.scheduling import Rating, Scheduler
from app.settings import Settings
from app.storage.database import Database, head_revision
from app.storage.models import ChoiceAttempt, ReviewLog
from app.web import create_app
from tests.conftest import CSRFClient, Grader

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def practise(database: Database, learner: Learner, snapshot: Snapshot, grade: Grader) -> None:
    quiz = snapshot.cards["test-scaling"].multiple_choice
    assert quiz is not None
    for n, key in enumerate(["test-other", "test-scaling", "test-scaling/flash", "test-other"]):
        grade(
            snapshot,
            key,
            [Rating.GOOD, Rating.AGAIN][n % 2],
            T0 + timedelta(days=n),
            answer=f"é {n}",
        )
    grade(snapshot, "test-other", Rating.HARD, T0 + timedelta(days=5), practice=True)
    with database.session() as session:
        progress.record_choice(
            session, learner, card_id="test-scaling", choice=quiz.choices[0], now=T0
        )


def exported(database: Database, learner: Learner) -> str:
    with database.session() as session:
        return "".join(progress.export(session, learner.user_id, now=T0))


def import_text(database: Database, learner: Learner, text: str) -> progress.Imported:
    with database.session() as session:
        return progress.import_file(session, learner, progress.parse(text), scheduler=Scheduler())


def row_counts(database: Database) -> tuple[int, int]:
    with database.session() as session:
        return (
            session.scalar(select(func.count()).select_from(ReviewLog)) or 0,
            session.scalar(select(func.count()).select_from(ChoiceAttempt)) or 0,
        )


@pytest.fixture
def other_database(tmp_path: Path) -> Database:
    """A second, empty database to import into."""
    db = Database(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    db.upgrade()
    return db


def test_export_holds_every_review_and_choice(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    practise(database, learner, snapshot, grade)
    data = json.loads(exported(database, learner))
    assert (data["format"], data["version"], data["exported_at"]) == (
        "quizlab-progress",
        1,
        "2025-03-03T09:00:00Z",
    )
    assert [
        (r["card_id"], r["follow_up"], r["rating"], r["practice"]) for r in data["reviews"]
    ] == [
        ("test-other", "", 3, False),
        ("test-scaling", "", 1, False),
        ("test-scaling", "flash", 3, False),
        ("test-other", "", 1, False),
        ("test-other", "", 2, True),
    ]
    assert data["reviews"][0]["answer"] == "é 0"
    assert data["reviews"][1]["reviewed_at"] == "2025-03-04T09:00:00Z"
    [choice] = data["choices"]
    assert (choice["choice"], choice["correct"]) == ("a", False)


def test_import_into_a_fresh_database_rebuilds_the_same_schedule(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    grade: Grader,
    other_database: Database,
) -> None:
    practise(database, learner, snapshot, grade)
    text = exported(database, learner)
    other = Learner(other_database.local_user_id, learner.zone)
    imported = import_text(other_database, other, text)
    assert (imported.reviews_added, imported.choices_added, imported.reviews_skipped) == (5, 1, 0)
    with database.session() as session, other_database.session() as copy:
        assert practice.load_schedules(copy, other.user_id) == practice.load_schedules(
            session, learner.user_id
        )
    assert exported(other_database, other) == text
    other_database.dispose()


def test_importing_the_same_file_twice_adds_nothing(
    database: Database, learner: Learner, snapshot: Snapshot, grade: Grader
) -> None:
    practise(database, learner, snapshot, grade)
    text = exported(database, learner)
    before = (row_counts(database), exported(database, learner))
    for _ in range(2):
        imported = import_text(database, learner, text)
        assert (imported.reviews_added, imported.choices_added) == (0, 0)
        assert (imported.reviews_skipped, imported.choices_skipped) == (5, 1)
    assert (row_counts(database), exported(database, learner)) == before


def test_import_merges_two_histories_and_reschedules_from_both(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    grade: Grader,
    other_database: Database,
) -> None:
    grade(snapshot, "test-other", Rating.GOOD, T0)
    mine = exported(database, learner)
    other = Learner(other_database.local_user_id, learner.zone)
    Grader(other_database, other)(snapshot, "test-other", Rating.AGAIN, T0 + timedelta(days=1))
    imported = import_text(other_database, other, mine)
    assert imported.reviews_added == 1
    with other_database.session() as session:
        [merged] = practice.load_schedules(session, other.user_id).values()
    expected = Scheduler().replay(
        [(Rating.GOOD, T0), (Rating.AGAIN, T0 + timedelta(days=1))], seed="test-other"
    )
    assert merged == expected and merged.version == 2
    other_database.dispose()


# One review of a card the test content does not have.
GONE_CARD = json.dumps(
    {
        "format": "quizlab-progress",
        "version": 1,
        "reviews": [
            {
                "uid": "a" * 32,
                "card_id": "gone-card",
                "rating": 4,
                "reviewed_at": "2025-01-01T10:00:00+01:00",
            }
        ],
    }
)


def test_reviews_of_cards_not_in_the_content_are_kept(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    assert import_text(database, learner, GONE_CARD).reviews_added == 1
    with database.session() as session:
        assert practice.load_schedules(session, learner.user_id).keys() == {("gone-card", "")}
        due, _ = practice.next_item(session, learner, snapshot=snapshot, now=T0, new_per_day=20)
    assert due is not None and due.item.card.id == "test-other"  # the archived one is not served


def test_an_import_drops_the_archived_sets_the_snapshot_kept(
    database: Database, learner: Learner, snapshot: Snapshot
) -> None:
    def status() -> practice.QueueStatus:
        with database.session() as session:
            return practice.queue_status(
                session, learner, snapshot=snapshot, now=T0, new_per_day=20
            )

    before = status()  # reads the learner's archived set (none) and keeps it on the snapshot
    with database.session() as session:
        progress.import_file(
            session, learner, progress.parse(GONE_CARD), scheduler=Scheduler(), snapshot=snapshot
        )
    after = status()
    # gone-card is due, but archived: not counted, and not taken for a reviewed live item.
    assert (after.due_now, after.new_waiting) == (before.due_now, before.new_waiting) == (0, 5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        (
            '{"format": "anki"}',
            'not a Quizlab progress export: expected "format": "quizlab-progress"',
        ),
        (
            '{"format": "quizlab-progress", "version": 9}',
            "export version 9 is not one this Quizlab reads (1)",
        ),
        (
            '{"format": "quizlab-progress", "version": 1, "reviews": [{"uid": "'
            + "b" * 32
            + '", "card_id": "x", "rating": 5, "reviewed_at": "2025-01-01T00:00:00Z"}]}',
            "reviews.0.rating: Input should be less than or equal to 4",
        ),
        (
            '{"format": "quizlab-progress", "version": 1, "reviews": [{"uid": "'
            + "b" * 32
            + '", "card_id": "x", "rating": 3, "reviewed_at": "2025-01-01T00:00:00"}]}',
            "reviews.0.reviewed_at: Input should have timezone info",
        ),
    ],
)
def test_a_bad_file_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ProgressFileError) as error:
        progress.parse(text)
    assert message in str(error.value)


def quizlab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "QUIZLAB_DATA_DIR": str(tmp_path / "data"),
        "QUIZLAB_CONTENT_DIR": str(tmp_path / "content"),
    }
    env.pop("QUIZLAB_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_command_line_upgrades_exports_imports_and_rebuilds(
    tmp_path: Path, content_dir: Path
) -> None:
    upgraded = quizlab(tmp_path, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"database at revision {head_revision()} (was empty)" in upgraded.stderr
    database = Database(f"sqlite:///{tmp_path / 'data' / 'quizlab.sqlite3'}")
    learner = Learner(database.local_user_id, ZoneInfo("UTC"))
    snapshot = Library(content_dir).load()
    Grader(database, learner)(snapshot, "test-other", Rating.GOOD, T0)
    database.dispose()

    out = tmp_path / "progress.json"
    result = quizlab(tmp_path, "progress", "export", str(out))
    assert result.returncode == 0, result.stderr
    assert len(json.loads(out.read_text())["reviews"]) == 1
    for added in (0, 0):
        result = quizlab(tmp_path, "progress", "import", str(out))
        assert result.returncode == 0, result.stderr
        assert f"{added} review(s) and 0 multiple-choice attempt(s) added; 1 already there" in (
            result.stderr
        )
    rebuilt = quizlab(tmp_path, "db", "rebuild-schedule")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "1 item(s) rebuilt from the review log; 0 differed from the stored schedule" in (
        rebuilt.stderr
    )

    (tmp_path / "bad.json").write_text('{"format": "quizlab-progress", "version": 1, "reviews": 3}')
    bad = quizlab(tmp_path, "progress", "import", str(tmp_path / "bad.json"))
    assert bad.returncode == 1
    assert "bad.json: reviews: Input should be a valid list" in bad.stderr
    missing = quizlab(tmp_path, "progress", "import", str(tmp_path / "nope.json"))
    assert missing.returncode == 2


def upload(client: TestClient, content: bytes, filename: str = "progress.json") -> Response:
    """The stats page's import form, sent as a browser sends it: the token field first."""
    token = form_token(client.get("/stats").text)
    files = {"file": (filename, content, "application/json")}
    # Sec-Fetch-Site: what a browser says of a form sent from this site's own page.
    return client.post(
        "/stats/import",
        data={"csrf_token": token},
        files=files,
        headers={"Sec-Fetch-Site": "same-origin"},
    )


def form_token(html: str) -> str:
    field = BeautifulSoup(html, "html.parser").select_one("form.import-form input[name=csrf_token]")
    assert field is not None
    return str(field["value"])


def import_message(html: str) -> str:
    found = BeautifulSoup(html, "html.parser").select_one("#import-message")
    return found.get_text(" ", strip=True) if found else ""


def test_the_stats_page_imports_a_downloaded_file(
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    grade: Grader,
    db_settings: Settings,
    settings: Settings,
    tmp_path: Path,
) -> None:
    practise(database, learner, snapshot, grade)
    with CSRFClient(create_app(db_settings)) as here:
        downloaded = here.get("/progress").content
    elsewhere_settings = settings.model_copy(update={"data_dir": tmp_path / "elsewhere"})
    # A plain client: no X-CSRF-Token header, so the form's own token field is what passes.
    with TestClient(create_app(elsewhere_settings)) as elsewhere:
        first = upload(elsewhere, downloaded)
        assert first.status_code == 200
        assert import_message(first.text) == (
            "progress.json: 5 review(s) and 1 multiple-choice attempt(s) added; 0 already there."
        )
        again = upload(elsewhere, downloaded)
        assert import_message(again.text).endswith(
            "0 review(s) and 0 multiple-choice attempt(s) added; 6 already there."
        )
        # What the learner sees comes from the imported history, and it round-trips.
        assert (
            json.loads(elsewhere.get("/progress").content)["reviews"]
            == json.loads(downloaded)["reviews"]
        )


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b"", 422, "Choose a file first: one that \u201cDownload my progress\u201d wrote."),
        (
            b"{not json",
            422,
            "notes.txt: not JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1). Nothing was imported.",
        ),
        (
            b'{"format": "anki"}',
            422,
            'notes.txt: not a Quizlab progress export: expected "format": '
            '"quizlab-progress". Nothing was imported.',
        ),
    ],
)
def test_a_bad_upload_says_what_is_wrong_and_keeps_the_progress(
    db_client: TestClient,
    database: Database,
    learner: Learner,
    snapshot: Snapshot,
    grade: Grader,
    content: bytes,
    status: int,
    message: str,
) -> None:
    practise(database, learner, snapshot, grade)
    before = (row_counts(database), exported(database, learner))
    response = upload(db_client, content, filename="notes.txt")
    assert response.status_code == status
    assert import_message(response.text) == message
    assert (row_counts(database), exported(database, learner)) == before


def test_the_review_page_leaves_out_cards_an_upload_archived(db_client: TestClient) -> None:
    def counts() -> str:
        page = BeautifulSoup(db_client.get("/review").text, "html.parser")
        found = page.select_one(".queue-counts")
        assert found is not None
        return found.get_text(" ", strip=True)

    before = counts()
    assert before.startswith("0 due now")
    assert upload(db_client, GONE_CARD.encode()).status_code == 200
    assert counts() == before

"""History whose card is gone: listed by `quizlab progress orphans`, pruned on request."""

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from app.content.library import Library
from app.practice.activity import Learner
from app.practice.orphans import Orphan, find_orphans, prune_orphans
from app.storage.database import Database
from app.storage.models import CardActivity, ReviewItem, ReviewLog
from tests.cardtext import GOOD_CARD
from tests.conftest import Grader

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def rows(database: Database, table: type) -> int:
    with database.session() as session:
        return int(session.scalar(select(func.count()).select_from(table)) or 0)


def test_gone_cards_and_follow_ups_are_orphans_and_prune_keeps_the_log(
    content_dir: Path, database: Database, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-other", 3, AT)
    grade(snapshot, "test-scaling/flash", 3, AT)
    grade(snapshot, "test-scaling", 3, AT)
    (content_dir / "testdeck" / "other.md").unlink()
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("{#flash}", "{#flash-2}")
    )
    cards = Library(content_dir).load().cards.values()

    with database.session() as session:
        orphans = find_orphans(session, cards)
    assert orphans == [
        Orphan("test-other", "", 1, 1),
        Orphan("test-scaling", "flash", 1, 0),
    ]
    assert str(orphans[0]) == "card test-other: 1 schedule(s), 1 logged review(s)"

    with database.session() as session:
        assert prune_orphans(session, orphans) == 1 + 1 + 1  # two schedules, one totals row
        session.commit()
    with database.session() as session:
        assert find_orphans(session, cards) == []
    assert rows(database, ReviewItem) == 1  # test-scaling's answer
    assert rows(database, CardActivity) == 1
    assert rows(database, ReviewLog) == 3  # append-only: all kept


def test_an_orphan_like_a_live_id_suggests_the_alias(
    content_dir: Path, database: Database, grade: Grader
) -> None:
    grade(Library(content_dir).load(), "test-scaling", 3, AT)
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("id: test-scaling", "id: test-scaling-factor")
    )
    with database.session() as session:
        [orphan] = find_orphans(session, Library(content_dir).load().cards.values())
    assert str(orphan) == (
        "card test-scaling: 1 schedule(s), 1 logged review(s); if it is now "
        "'test-scaling-factor', add 'aliases: [test-scaling]' to that card to keep this history"
    )


def test_the_command_lists_and_prunes(content_dir: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QUIZLAB_CONTENT_DIR": str(content_dir),
        "QUIZLAB_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("QUIZLAB_DATABASE_URL", None)

    def quizlab(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", "progress", "orphans", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    first = quizlab()
    assert first.returncode == 0 and "no orphaned history" in first.stderr
    database = Database(f"sqlite:///{(tmp_path / 'data' / 'quizlab.sqlite3').resolve()}")
    grade = Grader(database, Learner(database.local_user_id, ZoneInfo("UTC")))
    grade(Library(content_dir).load(), "test-other", 3, AT)
    database.dispose()
    (content_dir / "testdeck" / "other.md").unlink()
    listed = quizlab()
    assert listed.stdout == "card test-other: 1 schedule(s), 1 logged review(s)\n"
    assert "run with --prune" in listed.stderr
    refused = subprocess.run(
        [sys.executable, "-m", "app", "progress", "orphans", "--prune"],
        input="n\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 1
    pruned = quizlab("--prune", "--yes")
    assert pruned.returncode == 0 and "2 row(s) deleted; the review log is kept" in pruned.stderr
    assert "no orphaned history" in quizlab().stderr


def test_the_check_warns_about_history_a_rename_would_lose(
    content_dir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "QUIZLAB_CONTENT_DIR": str(content_dir), "QUIZLAB_DATA_DIR": str(data)}
    env.pop("QUIZLAB_DATABASE_URL", None)
    scaling = content_dir / "testdeck" / "scaling.md"

    def history_warnings(*args: str) -> list[str]:
        """The check's warnings about history (the test cards have others: below standard)."""
        result = subprocess.run(
            [sys.executable, "-m", "app", "check", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return [line for line in result.stdout.splitlines() if "schedule(s)" in line]

    assert history_warnings() == []
    assert not data.exists()  # no database yet: none is made to look
    database = Database(f"sqlite:///{(data / 'quizlab.sqlite3').resolve()}")
    database.upgrade()
    grade = Grader(database, Learner(database.local_user_id, ZoneInfo("UTC")))
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-scaling/flash", 3, AT)
    grade(snapshot, "test-other", 3, AT)
    database.dispose()
    assert history_warnings() == []  # nothing renamed yet

    scaling.write_text(GOOD_CARD.replace("{#flash}", "{#flash-attention}"))
    line = GOOD_CARD.splitlines().index("## Follow-ups") + 1
    [warning] = history_warnings()
    assert warning.endswith(
        f"testdeck/scaling.md:{line}: warning: follow-up key 'flash' has 1 learner schedule(s) "
        "and no follow-up has it now: if you renamed it, write {#flash-attention was=flash}"
    )
    assert history_warnings("--no-history") == []
    scaling.write_text(GOOD_CARD.replace("{#flash}", "{#flash-attention was=flash}"))
    assert history_warnings() == []  # the server moves it when it loads the content

    scaling.write_text(
        GOOD_CARD.replace("{#flash}", "{#flash-attention was=flash}").replace(
            "[the other card](card:test-other)", "the other card"
        )
    )
    (content_dir / "testdeck" / "other.md").unlink()
    [gone] = history_warnings()
    assert gone.endswith(
        ":1: warning: card id 'test-other' has 1 learner schedule(s) and 1 logged review(s) "
        "and no card has it now: add 'aliases: [test-other]' to the card that replaced it, "
        "or remove the history with 'quizlab progress orphans --prune'"
    )
    assert history_warnings(str(scaling)) == []  # one file checked: the lost card is not its


def test_the_check_goes_on_when_the_database_does_not_answer(
    content_dir: Path, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "QUIZLAB_CONTENT_DIR": str(content_dir),
        "QUIZLAB_DATA_DIR": str(tmp_path / "data"),
        # A port nothing listens on.
        "QUIZLAB_DATABASE_URL": "postgresql+psycopg://quizlab:quizlab@127.0.0.1:9/quizlab",
    }
    result = subprocess.run(
        [sys.executable, "-m", "app", "check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Review history not checked: the database did not answer" in result.stderr

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

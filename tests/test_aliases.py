"""Renaming a card with `aliases:` keeps its history, on SQLite and PostgreSQL."""

from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlmodel import col

from app.content.library import Library
from app.practice.aliases import adopt_aliases
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import CardActivity, ReviewItem, ReviewLog
from app.web import create_app
from tests.cardtext import GOOD_CARD
from tests.conftest import Grader

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def count(database: Database, table: type, card_id: str) -> int:
    with database.session() as session:
        return int(
            session.scalar(select(func.count()).select_from(table).where(table.card_id == card_id))
            or 0
        )


def test_renamed_card_keeps_its_history(
    content_dir: Path, database: Database, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-scaling", 3, AT)
    grade(snapshot, "test-scaling/why-sqrt", 4, AT)

    card_file = content_dir / "testdeck" / "scaling.md"
    card_file.write_text(
        GOOD_CARD.replace("id: test-scaling", "id: test-scale-factor\naliases: [test-scaling]")
    )
    renamed = Library(content_dir).load()
    assert renamed.all_problems() == []
    assert renamed.cards["test-scale-factor"].aliases == ("test-scaling",)

    with database.session() as session:
        assert adopt_aliases(session, renamed.cards.values()) == 2 + 1  # schedules, totals
        session.commit()
    assert count(database, ReviewItem, "test-scale-factor") == 2
    # The log is append-only: it keeps the id each review was written under.
    assert count(database, ReviewLog, "test-scaling") == 2
    assert count(database, CardActivity, "test-scale-factor") == 1
    for table in (ReviewItem, CardActivity):
        assert count(database, table, "test-scaling") == 0
    # Again: nothing left to move.
    with database.session() as session:
        assert adopt_aliases(session, renamed.cards.values()) == 0

    # The next review continues the old schedule instead of starting afresh.
    graded = grade(renamed, "test-scale-factor", 3, AT.replace(day=20))
    assert graded is not None
    with database.session() as session:
        versions = session.scalars(
            select(col(ReviewItem.version)).where(col(ReviewItem.follow_up) == "")
        ).all()
    assert versions == [2]


def test_an_alias_that_is_still_a_card_is_an_error(content_dir: Path) -> None:
    card_file = content_dir / "testdeck" / "scaling.md"
    card_file.write_text(
        GOOD_CARD.replace("id: test-scaling", "id: test-scaling\naliases: [test-other]")
    )
    problems = Library(content_dir).load().all_problems()
    [problem] = problems
    assert problem.line == 2
    assert problem.message.startswith("alias 'test-other' is the id of ")
    assert problem.message.endswith("other.md: an alias is an id no card has any more")


def test_an_alias_two_cards_list_is_an_error(content_dir: Path) -> None:
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("id: test-scaling", "id: test-scaling\naliases: [test-old]")
    )
    other = content_dir / "testdeck" / "other.md"
    other.write_text(
        other.read_text().replace("id: test-other", "id: test-other\naliases: [test-old]")
    )
    problems = sorted(Library(content_dir).load().all_problems())
    assert [p.message.split(" is also listed by ")[0] for p in problems] == ["alias 'test-old'"] * 2
    assert all(p.message.endswith(": its history can move to one card only") for p in problems)
    assert problems[0].message.startswith("alias 'test-old' is also listed by ")
    assert "other.md" in problems[1].message or "other.md" in problems[0].message


def test_the_server_moves_history_when_it_loads_the_content(
    content_dir: Path, db_settings: Settings, database: Database, grade: Grader
) -> None:
    grade(Library(content_dir).load(), "test-scaling", 3, AT)
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("id: test-scaling", "id: test-scale-factor\naliases: [test-scaling]")
    )
    with TestClient(create_app(db_settings)):
        pass
    assert count(database, ReviewItem, "test-scale-factor") == 1
    assert count(database, ReviewItem, "test-scaling") == 0


def schedules(database: Database) -> list[tuple[str, str]]:
    with database.session() as session:
        rows = session.execute(select(col(ReviewItem.card_id), col(ReviewItem.follow_up))).all()
    return sorted((card_id, key) for card_id, key in rows)


def test_a_renamed_follow_up_keeps_its_schedule(
    content_dir: Path, database: Database, grade: Grader
) -> None:
    snapshot = Library(content_dir).load()
    grade(snapshot, "test-scaling/why-sqrt", 4, AT)
    grade(snapshot, "test-scaling/flash", 3, AT)
    card_file = content_dir / "testdeck" / "scaling.md"
    card_file.write_text(GOOD_CARD.replace("{#why-sqrt}", "{#why-root-d was=why-sqrt}"))
    renamed = Library(content_dir).load()
    assert renamed.all_problems() == []
    assert renamed.cards["test-scaling"].follow_ups[0].aliases == ("why-sqrt",)

    with database.session() as session:
        assert adopt_aliases(session, renamed.cards.values()) == 1
        session.commit()
    assert schedules(database) == [("test-scaling", "flash"), ("test-scaling", "why-root-d")]
    with database.session() as session:
        assert adopt_aliases(session, renamed.cards.values()) == 0
    # The next review of the renamed follow-up continues its schedule.
    assert grade(renamed, "test-scaling/why-root-d", 3, AT.replace(day=20)) is not None
    with database.session() as session:
        versions = session.scalars(
            select(col(ReviewItem.version)).where(col(ReviewItem.follow_up) == "why-root-d")
        ).all()
    assert versions == [2]


def test_a_card_and_its_follow_up_renamed_together(
    content_dir: Path, database: Database, grade: Grader
) -> None:
    grade(Library(content_dir).load(), "test-scaling/why-sqrt", 4, AT)
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace(
            "id: test-scaling", "id: test-scale-factor\naliases: [test-scaling]"
        ).replace("{#why-sqrt}", "{#why-root-d was=why-sqrt}")
    )
    renamed = Library(content_dir).load()
    with database.session() as session:
        assert adopt_aliases(session, renamed.cards.values()) == 1 + 1 + 1  # id, totals, key
        session.commit()
    assert schedules(database) == [("test-scale-factor", "why-root-d")]


def test_old_keys_are_checked(content_dir: Path) -> None:
    card_file = content_dir / "testdeck" / "scaling.md"
    cases = {
        "{#why-sqrt was=Old Key}": "unexpected 'was=Old Key' after the key: write {#why-sqrt was=old-key} "
        "(old keys separated by commas)",
        "{#why-sqrt was=why-sqrt}": "old key 'why-sqrt' must be a former key of this follow-up, "
        "lowercase letters, digits and '-': write {#why-sqrt was=old-key} (old keys separated "
        "by commas)",
        "{#why-sqrt old}": "unexpected 'old' after the key: write {#why-sqrt was=old-key} "
        "(old keys separated by commas)",
    }
    for written, message in cases.items():
        card_file.write_text(GOOD_CARD.replace("{#why-sqrt}", written))
        [problem] = Library(content_dir).load().all_problems()
        assert problem.message == message
        assert (
            problem.line == GOOD_CARD.splitlines().index("### Why the square root? {#why-sqrt}") + 1
        )
    flash_line = GOOD_CARD.splitlines().index("### What does FlashAttention do? {#flash}") + 1
    card_file.write_text(GOOD_CARD.replace("{#flash}", "{#flash was=why-sqrt}"))
    [problem] = Library(content_dir).load().all_problems()
    assert (problem.line, problem.message) == (
        flash_line,
        f"old key 'why-sqrt' is the key of the follow-up on line {flash_line - 4}: "
        "an old key is one no follow-up has any more",
    )
    card_file.write_text(
        GOOD_CARD.replace("{#flash}", "{#flash was=old}").replace(
            "{#why-sqrt}", "{#why-sqrt was=old}"
        )
    )
    problems = Library(content_dir).load().all_problems()
    assert [p.message for p in problems] == [
        "old key 'old' is listed by two follow-ups: give it to one of them"
    ] * 2
    card_file.write_text(GOOD_CARD.replace("{#tuned}", "{#tuned was=tuning}"))
    [problem] = Library(content_dir).load().all_problems()
    assert problem.message.startswith("only a follow-up lists old keys")

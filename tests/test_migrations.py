"""The schema comes from the migrations alone, and they describe exactly the models."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app.storage.database import Database, alembic_config, head_revision
from app.storage.models import metadata

TABLES = {
    "alembic_version",
    "app_user",
    "review_item",
    "review_log",
    "choice_attempt",
    "daily_activity",
    "card_activity",
    "demo_result",
    "login_failure",
    "invite",
    "interview_round",
    "interview_question",
    "interview_answer",
    "interview_grade",
    "user_session",
}


def test_upgrade_from_an_empty_database_creates_every_table(database_url: str) -> None:
    db = Database(database_url)
    try:
        assert db.current_revision() is None
        db.upgrade()
        assert db.current_revision() == head_revision()
        assert set(inspect(db.engine).get_table_names()) == TABLES
        db.upgrade()  # a second start-up changes nothing
        assert db.current_revision() == head_revision()
    finally:
        db.dispose()


def test_models_and_migrations_describe_the_same_schema(database: Database) -> None:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, metadata)
    assert differences == [], (
        "app/storage/models.py and app/storage/migrations differ: write a migration for "
        f"{differences} (alembic revision --autogenerate helps)"
    )


def test_downgrade_to_empty_and_upgrade_again(database: Database) -> None:
    with database.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    assert set(inspect(database.engine).get_table_names()) <= {"alembic_version"}
    database.upgrade()
    assert set(inspect(database.engine).get_table_names()) == TABLES


def test_the_migration_chain_is_linear() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())
    assert len(scripts.get_heads()) == 1, "two heads: rebase the newer migration on the other"
    for revision in scripts.walk_revisions():
        down = revision.down_revision
        assert down is None or isinstance(down, str), f"{revision.revision} merges branches"


def test_one_local_user_exists_from_the_start(database: Database) -> None:
    with database.engine.connect() as connection:
        users = connection.execute(text("SELECT id, name FROM app_user")).all()
    assert [tuple(user) for user in users] == [(1, "local")]
    assert database.local_user_id == 1


@pytest.mark.parametrize("table", ["review_log", "choice_attempt"])
@pytest.mark.parametrize("statement", ["UPDATE {table} SET card_id = 'x'", "DELETE FROM {table}"])
def test_history_tables_refuse_updates_and_deletes(
    database: Database, table: str, statement: str
) -> None:
    now = datetime.now(UTC).replace(tzinfo=None)
    with database.engine.begin() as connection:
        if table == "review_log":
            connection.execute(
                text(
                    "INSERT INTO review_log (uid, user_id, card_id, follow_up, rating, answer,"
                    " duration_ms, reviewed_at, practice) VALUES"
                    " ('a', 1, 'c', '', 3, '', 0, :now, false)"
                ),
                {"now": now},
            )
        else:
            connection.execute(
                text(
                    "INSERT INTO choice_attempt (uid, user_id, card_id, choice, choice_text,"
                    " correct, attempted_at) VALUES ('a', 1, 'c', 'a', '', true, :now)"
                ),
                {"now": now},
            )
    with (
        pytest.raises(sqlalchemy.exc.DBAPIError, match="append-only"),
        database.engine.begin() as connection,
    ):
        connection.execute(text(statement.format(table=table)))
    with database.engine.connect() as connection:
        assert connection.execute(text(f"SELECT card_id FROM {table}")).scalar_one() == "c"


@pytest.mark.parametrize("table", ["interview_answer", "interview_grade"])
def test_interview_answers_and_grades_refuse_updates_and_deletes(
    database: Database, table: str
) -> None:
    now = datetime.now(UTC).replace(tzinfo=None)
    with database.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO interview_round (uid, user_id, decks, weakest, mix, minutes,"
                " started_at, ends_at) VALUES ('r', 1, '', false, 'mixed', 15, :now, :now)"
            ),
            {"now": now},
        )
        connection.execute(
            text(
                "INSERT INTO interview_question (round_id, position, card_id, follow_up, minutes)"
                " VALUES (1, 0, 'c', '', 4)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO interview_answer (question_id, text, saved_at)"
                " VALUES (1, 'typed', :now)"
                if table == "interview_answer"
                else "INSERT INTO interview_grade (question_id, score, rating, covered, missed,"
                " red_flags, review_uid, graded_at) VALUES (1, 50, 2, '[]', '[]', '[]', 'u', :now)"
            ),
            {"now": now},
        )
    for statement in (f"UPDATE {table} SET question_id = 1", f"DELETE FROM {table}"):
        with (
            pytest.raises(sqlalchemy.exc.DBAPIError, match="append-only"),
            database.engine.begin() as connection,
        ):
            connection.execute(text(statement))
    with database.engine.connect() as connection:
        assert connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 1


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/wal.sqlite3")
    try:
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
    finally:
        db.dispose()


def test_a_new_sqlite_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """Progress and password hashes: mode 0600, like the secret key, whatever the umask."""
    path = tmp_path / "data" / "quizlab.sqlite3"
    db = Database(f"sqlite:///{path}")
    try:
        db.upgrade()
        with db.engine.connect() as connection:  # the WAL files exist while it is open
            connection.exec_driver_sql("SELECT 1")
            files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
            assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {
                f.name: "0o600" for f in files
            }
    finally:
        db.dispose()


def test_choice_red_flags_arrive_without_touching_the_append_only_rows(
    database_url: str,
) -> None:
    """0008 adds a column in place: earlier attempts read "", the triggers stay, both ways."""
    db = Database(database_url)
    now = datetime.now(UTC).replace(tzinfo=None)
    try:
        db.upgrade("0007")
        with db.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO choice_attempt (uid, user_id, card_id, choice, choice_text,"
                    " correct, attempted_at) VALUES ('a', 1, 'c', 'a', '', false, :now)"
                ),
                {"now": now},
            )
        db.upgrade()
        with db.engine.connect() as connection:
            assert (
                connection.execute(text("SELECT red_flag FROM choice_attempt")).scalar_one() == ""
            )
        for step, revision in ((command.downgrade, "0007"), (command.upgrade, "head")):
            with db.engine.begin() as connection:
                step(alembic_config(connection), revision)
            with (
                pytest.raises(sqlalchemy.exc.DBAPIError, match="append-only"),
                db.engine.begin() as connection,
            ):
                connection.execute(text("DELETE FROM choice_attempt"))
    finally:
        db.dispose()

"""The database: engine, sessions, migrations and the local user.

:class:`Database` wraps one SQLAlchemy engine for a URL (a SQLite file by
default, PostgreSQL when ``QUIZLAB_DATABASE_URL`` names one). The schema is
only ever changed by the Alembic migrations in ``app/storage/migrations``, applied by
:meth:`Database.upgrade` at start-up and by ``quizlab db upgrade``.
"""

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.dml import Insert
from sqlmodel import col

from app.storage.models import LoginFailure, User

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
LOCAL_USER = "local"
# Seconds a SQLite writer waits for another writer before giving up: grades are
# short transactions, so a few seconds covers any real contention.
SQLITE_BUSY_TIMEOUT_MS = 5_000


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets pages read while a grade writes; NORMAL sync is safe with WAL
    # (a power cut can lose the last commits, never corrupt the file).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def _create_private(path: Path) -> None:
    """Create an empty SQLite file readable by its owner only (0600), if there is none.

    SQLite would create it with the umask's mode (often 0644), and it holds
    everyone's progress and password hashes. Its -wal and -shm files take the
    same mode from it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(descriptor)
    os.chmod(path, 0o600)  # the umask may have taken bits away, never added: this is exact


def make_engine(url: str) -> Engine:
    """An engine for ``url``; for a SQLite file, creates its folder and sets the pragmas."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            _create_private(Path(parsed.database))
        # Sessions move between FastAPI's worker threads, one thread at a time.
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)


def peek_engine(url: str) -> Engine | None:
    """An engine that only looks: None for a SQLite file that does not exist (none is
    made), a read-only connection to one that does, a 3-second connect timeout to a server.

    For tools that read history if there is any (``quizlab check``), never a request.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            return None
        path = Path(parsed.database)
        if not path.is_file():
            return None
        return create_engine(f"sqlite:///file:{quote(str(path.resolve()))}?mode=ro&uri=true")
    return create_engine(url, connect_args={"connect_timeout": 3})


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """Alembic's configuration, built in code: no alembic.ini to keep next to the app."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        # ConfigParser treats % as interpolation; URLs may contain %-escapes.
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


class Database:
    """One database: the engine, a session factory, and the id of the local user."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._local_user_id: int | None = None

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def upgrade(self, revision: str = "head") -> None:
        """Apply the migrations up to ``revision``; a no-op when already there."""
        with self.engine.begin() as connection:
            if self.dialect == "postgresql":
                # Server processes starting together: one migrates, the others wait for it.
                connection.exec_driver_sql("SELECT pg_advisory_xact_lock(5172603)")
            command.upgrade(alembic_config(connection), revision)

    def prepare(self) -> None:
        """Apply the migrations and look up the local user: all a request needs, done once."""
        self.upgrade()
        _ = self.local_user_id

    def current_revision(self) -> str | None:
        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as session:
            yield session

    @property
    def local_user_id(self) -> int:
        """The id of the one user of a single-user install, created on first use."""
        if self._local_user_id is None:
            with self.session() as session:
                user_id = session.scalar(select(col(User.id)).where(col(User.name) == LOCAL_USER))
                if user_id is None:
                    user = User(name=LOCAL_USER, created_at=datetime.now(UTC))
                    session.add(user)
                    session.commit()
                    user_id = user.id
                assert user_id is not None
                self._local_user_id = user_id
        return self._local_user_id

    def probe_write(self) -> None:
        """Write a row and roll it back; raises SQLAlchemyError when storage refuses writes."""
        with self.engine.connect() as connection, connection.begin() as transaction:
            connection.execute(
                insert(LoginFailure).values(scope="probe", key="", at=datetime.now(UTC))
            )
            transaction.rollback()

    def dispose(self) -> None:
        self.engine.dispose()


def upsert(
    dialect: str,
    table: Any,
    values: Mapping[str, Any],
    *,
    keys: list[str],
    add: list[str],
    replace: tuple[str, ...] = (),
) -> Insert:
    """INSERT a row; if one with the same ``keys`` exists, add to its ``add`` columns instead.

    Columns named in ``replace`` take the new value; the others keep theirs.
    Both databases do this in one atomic statement, so two grades recorded at
    once both count.
    """
    builder = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = builder(table).values(**values)
    excluded = statement.excluded
    updates = {name: table.c[name] + excluded[name] for name in add}
    updates |= {name: excluded[name] for name in replace}
    return statement.on_conflict_do_update(index_elements=keys, set_=updates)

"""Alembic's entry point, run by :func:`app.storage.database.Database.upgrade` and ``quizlab db``.

The caller passes an open connection in ``config.attributes["connection"]``
(see :func:`app.storage.database.alembic_config`); ``sqlalchemy.url`` is the fallback for
Alembic's own command line.
"""

from alembic import context
from sqlalchemy import Connection

from app.storage.database import make_engine
from app.storage.models import metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite alters a table by copying it; batch mode writes migrations that way.
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported; pass a database")

connection = context.config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    engine = make_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as own_connection:
        run(own_connection)
    engine.dispose()

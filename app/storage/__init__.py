"""Storage: the tables, the engine and sessions, migrations, and stored demo results.

SQLite by default, PostgreSQL when ``QUIZLAB_DATABASE_URL`` names one. The
schema is changed only by the Alembic migrations in ``migrations/``.

Transactions: the caller owns them. Functions in :mod:`app.practice`,
:mod:`app.accounts` and here that take a ``Session`` add, flush and read, but
never commit; whoever opened the session (a request's ``SessionDep``, a CLI
command, a test) commits once at the end of its unit of work, so one request
is one transaction. The exceptions open their own short session and say so
(the result store, the sign-in limiter's reservations), because they must
commit independently of a request that may fail.

May import: itself. Never content, practice, the web, the CLI or torch
(tests/test_architecture.py).
"""

from app.storage.database import LOCAL_USER, Database

__all__ = ["LOCAL_USER", "Database"]

"""Storage: the tables, the engine and sessions, migrations, and stored demo results.

SQLite by default, PostgreSQL when ``QUIZLAB_DATABASE_URL`` names one. The
schema is changed only by the Alembic migrations in ``migrations/``.

Transactions: services commit. A public function of :mod:`app.practice` or
:mod:`app.accounts` that changes stored data is one unit of work: it commits
before it returns, and when it refuses (a domain error) it rolls back what it
wrote before raising. Routes and CLI commands never commit or roll back around
a service call. The exceptions are building blocks whose docstrings say "the
caller commits" (``rebuild_schedule``, ``activity.rebuild``): a CLI command that
composes several of them into one unit commits once at the end. The result
store and the sign-in limiter open their own short sessions, because they
must commit whatever becomes of the request that uses them.

May import: itself. Never content, practice, the web, the CLI or torch
(tests/test_architecture.py).
"""

from app.storage.database import LOCAL_USER, Database

__all__ = ["LOCAL_USER", "Database"]

"""Alembic migrations: the only thing that changes the schema. Keep the chain linear."""

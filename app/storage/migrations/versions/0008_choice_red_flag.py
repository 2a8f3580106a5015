"""A multiple-choice attempt names the red flag of the option picked.

The letter an option had (``choice``) moves when an author reorders options;
the red flag's key is the option's identity, so an old wrong answer keeps its
meaning. Empty for the correct option, and for attempts made before this
revision (the table is append-only: they stay as they were written).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN on both databases: SQLite keeps the table (and its
    # append-only triggers) instead of copying it.
    op.add_column(
        "choice_attempt",
        sa.Column("red_flag", sa.String(80), nullable=False, server_default=""),
    )


def downgrade() -> None:
    # Not batch mode: on SQLite that copies the table and loses its triggers.
    op.execute("ALTER TABLE choice_attempt DROP COLUMN red_flag")

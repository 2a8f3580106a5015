"""Demo results: the live-number cache shared by web replicas.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "demo_result",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("demo", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_demo_result"),
    )
    op.create_index("ix_demo_result_demo", "demo_result", ["demo"])


def downgrade() -> None:
    op.drop_index("ix_demo_result_demo", table_name="demo_result")
    op.drop_table("demo_result")

"""Login failures: sign-in rate limits shared by every web replica.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_failure",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_login_failure"),
    )
    op.create_index("ix_login_failure_at", "login_failure", ["at"])
    op.create_index("ix_login_failure_scope_key_at", "login_failure", ["scope", "key", "at"])


def downgrade() -> None:
    op.drop_index("ix_login_failure_scope_key_at", table_name="login_failure")
    op.drop_index("ix_login_failure_at", table_name="login_failure")
    op.drop_table("login_failure")

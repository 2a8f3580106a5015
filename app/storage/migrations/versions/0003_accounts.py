"""Accounts: passwords, admins and disabled users on app_user, and invite links.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("app_user") as batch:
        batch.add_column(sa.Column("password_hash", sa.String(255), nullable=True))
        batch.add_column(
            sa.Column("is_admin", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "invite",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["created_by"], ["app_user.id"], name="fk_invite_created_by_app_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_invite"),
        sa.UniqueConstraint("token_hash", name="uq_invite_token_hash"),
    )


def downgrade() -> None:
    op.drop_table("invite")
    with op.batch_alter_table("app_user") as batch:
        batch.drop_column("disabled")
        batch.drop_column("is_admin")
        batch.drop_column("password_hash")

"""An invite carries the name the admin picked for the person it invites.

The invite page then never has to say whether a name is taken (docs/security.md).
Invites made before this revision have no name; their links are refused with a
message asking for a new one.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("invite") as batch:
        batch.add_column(sa.Column("name", sa.String(40), nullable=True))
    op.create_index("ix_invite_name", "invite", ["name"])


def downgrade() -> None:
    op.drop_index("ix_invite_name", table_name="invite")
    with op.batch_alter_table("invite") as batch:
        batch.drop_column("name")

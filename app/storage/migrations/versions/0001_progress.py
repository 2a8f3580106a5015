"""Progress: users, review items and their log, multiple-choice attempts, activity totals.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written by hand rather than imported from app.storage.models: a migration must keep
describing the schema of its day after the models move on. Times are naive
UTC (app.storage.models.UTCDateTime stores them so).
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("review_log", "choice_attempt")


def upgrade() -> None:
    user = op.create_table(
        "app_user",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_app_user"),
        sa.UniqueConstraint("name", name="uq_app_user_name"),
    )
    op.bulk_insert(
        user, [{"id": 1, "name": "local", "created_at": datetime.now(UTC).replace(tzinfo=None)}]
    )
    if op.get_bind().dialect.name == "postgresql":
        # The explicit id above did not move the serial's counter on.
        op.execute("SELECT setval(pg_get_serial_sequence('app_user', 'id'), 1)")

    op.create_table(
        "review_item",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.String(80), nullable=False),
        sa.Column("follow_up", sa.String(80), nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("stability", sa.Float(), nullable=True),
        sa.Column("difficulty", sa.Float(), nullable=True),
        sa.Column("due", sa.DateTime(), nullable=False),
        sa.Column("last_review", sa.DateTime(), nullable=False),
        sa.Column("first_review", sa.DateTime(), nullable=False),
        sa.Column("lapses", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_review_item_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_item"),
        sa.UniqueConstraint(
            "user_id", "card_id", "follow_up", name="uq_review_item_user_id_card_id_follow_up"
        ),
    )
    op.create_index("ix_review_item_user_id_due", "review_item", ["user_id", "due"])
    op.create_index(
        "ix_review_item_user_id_first_review", "review_item", ["user_id", "first_review"]
    )

    op.create_table(
        "review_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.String(80), nullable=False),
        sa.Column("follow_up", sa.String(80), nullable=False),
        sa.Column("rating", sa.SmallInteger(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("reviewed_at", sa.DateTime(), nullable=False),
        sa.Column("practice", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_review_log_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_log"),
        sa.UniqueConstraint("user_id", "uid", name="uq_review_log_user_id_uid"),
    )
    op.create_index(
        "ix_review_log_user_id_card_id_follow_up_reviewed_at",
        "review_log",
        ["user_id", "card_id", "follow_up", "reviewed_at"],
    )

    op.create_table(
        "choice_attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.String(80), nullable=False),
        sa.Column("choice", sa.String(8), nullable=False),
        sa.Column("choice_text", sa.Text(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("attempted_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_choice_attempt_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_choice_attempt"),
        sa.UniqueConstraint("user_id", "uid", name="uq_choice_attempt_user_id_uid"),
    )

    op.create_table(
        "daily_activity",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("reviews", sa.Integer(), nullable=False),
        sa.Column("recalled", sa.Integer(), nullable=False),
        sa.Column("choices", sa.Integer(), nullable=False),
        sa.Column("choices_correct", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_daily_activity_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("user_id", "day", name="pk_daily_activity"),
    )

    op.create_table(
        "card_activity",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.String(80), nullable=False),
        sa.Column("answer_reviews", sa.Integer(), nullable=False),
        sa.Column("answer_recalled", sa.Integer(), nullable=False),
        sa.Column("follow_up_reviews", sa.Integer(), nullable=False),
        sa.Column("follow_up_recalled", sa.Integer(), nullable=False),
        sa.Column("choices", sa.Integer(), nullable=False),
        sa.Column("choices_correct", sa.Integer(), nullable=False),
        sa.Column("last_activity", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_card_activity_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("user_id", "card_id", name="pk_card_activity"),
    )

    _refuse_changes_to(APPEND_ONLY)


def _refuse_changes_to(tables: Sequence[str]) -> None:
    """Make the history tables append-only in the database itself, not only by convention."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION quizlab_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION '% is append-only: rows are never updated or deleted',
                    TG_TABLE_NAME;
            END;
            $$ LANGUAGE plpgsql
            """
        )
        for table in tables:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION quizlab_append_only()"
            )
        return
    for table in tables:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: "
                "rows are never updated or deleted'); END"
            )


def downgrade() -> None:
    for table in (
        "card_activity",
        "daily_activity",
        "choice_attempt",
        "review_log",
        "review_item",
        "app_user",
    ):
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS quizlab_append_only()")

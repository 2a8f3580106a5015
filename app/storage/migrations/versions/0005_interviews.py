"""Mock interviews: rounds, their questions, every saved answer and each grade.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Answers and grades are history: append-only, like review_log (the triggers
reuse 0001's function on PostgreSQL).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("interview_answer", "interview_grade")


def upgrade() -> None:
    op.create_table(
        "interview_round",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("decks", sa.Text(), nullable=False),
        sa.Column("weakest", sa.Boolean(), nullable=False),
        sa.Column("mix", sa.String(16), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ends_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("graded_at", sa.DateTime(), nullable=True),
        sa.Column("score", sa.SmallInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name="fk_interview_round_user_id_app_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_interview_round"),
        sa.UniqueConstraint("user_id", "uid", name="uq_interview_round_user_id_uid"),
    )
    op.create_index(
        "ix_interview_round_user_id_started_at", "interview_round", ["user_id", "started_at"]
    )
    op.create_table(
        "interview_question",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.String(80), nullable=False),
        sa.Column("follow_up", sa.String(80), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("asked_at", sa.DateTime(), nullable=True),
        sa.Column("answered_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["round_id"],
            ["interview_round.id"],
            name="fk_interview_question_round_id_interview_round",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_interview_question"),
        sa.UniqueConstraint("round_id", "position", name="uq_interview_question_round_id_position"),
    )
    op.create_table(
        "interview_answer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("saved_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["question_id"],
            ["interview_question.id"],
            name="fk_interview_answer_question_id_interview_question",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_interview_answer"),
    )
    op.create_index("ix_interview_answer_question_id_id", "interview_answer", ["question_id", "id"])
    op.create_table(
        "interview_grade",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=False),
        sa.Column("rating", sa.SmallInteger(), nullable=False),
        sa.Column("covered", sa.Text(), nullable=False),
        sa.Column("missed", sa.Text(), nullable=False),
        sa.Column("coverage", sa.SmallInteger(), nullable=True),
        sa.Column("red_flags", sa.Text(), nullable=False),
        sa.Column("review_uid", sa.String(32), nullable=False),
        sa.Column("graded_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["question_id"],
            ["interview_question.id"],
            name="fk_interview_grade_question_id_interview_question",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_interview_grade"),
        sa.UniqueConstraint("question_id", name="uq_interview_grade_question_id"),
    )
    _refuse_changes_to(APPEND_ONLY)


def _refuse_changes_to(tables: Sequence[str]) -> None:
    """The same triggers as 0001's on the history tables; PostgreSQL reuses its function."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table in tables:
        if postgresql:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION quizlab_append_only()"
            )
            continue
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: "
                "rows are never updated or deleted'); END"
            )


def downgrade() -> None:
    # Dropping a table drops its triggers too.
    for table in ("interview_grade", "interview_answer", "interview_question", "interview_round"):
        op.drop_table(table)

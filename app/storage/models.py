"""Every database table, in one place: the metadata Alembic compares its migrations with.

Progress is keyed on what authors promise never to change: a card's ``id`` and
a follow-up's ``{#key}``. Deck, title and wording are looked up in the current
content, so a reworded or moved card keeps its history, and a removed card's
rows stay (shown as archived in the stats).

Tables, by the question each answers:

- :class:`User`: whose progress is it? One local user today; every progress
  row names its user so accounts can come later without rewriting rows.
- :class:`ReviewLog`: what happened? Every graded review, appended and never
  changed (triggers in the migration refuse UPDATE and DELETE).
- :class:`ReviewItem`: when does each item come back? FSRS state, derived from
  the log and rebuildable from it (``quizlab db rebuild-schedule``).
- :class:`ChoiceAttempt`: which multiple-choice option was picked, and was it
  right? Append-only too.
- :class:`DailyActivity`, :class:`CardActivity`: running totals for the stats
  page, so it never scans the whole log. Derived, rebuildable like the schedule.
- :class:`InterviewRound`, :class:`InterviewQuestion`: which mock interviews
  were held, what each asked, and when each question was asked and answered.
  :class:`InterviewAnswer` (every save of a typed answer) and
  :class:`InterviewGrade` (how the learner graded it) are append-only.
- :class:`Invite`, :class:`UserSession`, :class:`LoginFailure`: accounts mode's
  invite links, signed-in browsers and sign-in limits.
- :class:`DemoResult`: what did a live demo compute? A cache shared by web
  replicas; not progress.

Times are stored as naive UTC (:class:`UTCDateTime`) so SQLite and PostgreSQL
behave alike, and read back as aware UTC datetimes.
"""

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    Dialect,
    Float,
    Index,
    SmallInteger,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

# Deterministic constraint names, so later migrations can alter them by name on
# every database (SQLite batch mode needs names to find constraints).
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = SQLModel.metadata

# The answer part of a card is the review item whose follow_up is empty.
ANSWER = ""
ID_LENGTH = 80  # card ids and follow-up keys: see app.content.card.ID_PATTERN
UID_LENGTH = 32  # uuid4().hex
KEY_LENGTH = 255  # app.accounts.limits: a sign-in name (100 characters, lower-cased) or an address


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime, stored naive: SQLite has no time zones, and one rule is simpler."""

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware one (UTC)")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)


class User(SQLModel, table=True):
    __tablename__ = "app_user"  # "user" is reserved in PostgreSQL

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_type=String(ID_LENGTH), unique=True)
    created_at: datetime = Field(sa_type=UTCDateTime)
    # Accounts mode (app.accounts.users): an Argon2 hash; None for the local user
    # (who never signs in).
    password_hash: str | None = Field(default=None, sa_type=String(255))
    is_admin: bool = Field(default=False, sa_type=Boolean)
    disabled: bool = Field(default=False, sa_type=Boolean)


class Invite(SQLModel, table=True):
    """A one-time link an admin makes for a named person, who picks a password with it."""

    __tablename__ = "invite"

    id: int | None = Field(default=None, primary_key=True)
    # sha256 hex of the token in the link: the database never holds a usable link.
    token_hash: str = Field(sa_type=String(64), unique=True)
    # The new user's name, picked by the admin, so the invite page never has to
    # say whether a name is taken. None for invites made before names (refused).
    name: str | None = Field(default=None, sa_type=String(40), index=True)
    is_admin: bool = Field(default=False, sa_type=Boolean)
    created_by: int = Field(foreign_key="app_user.id")
    created_at: datetime = Field(sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    used_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class UserSession(SQLModel, table=True):
    """One signed-in browser (accounts mode); deleting the row signs it out (app.accounts.sessions).

    The cookie holds a random token; this row its SHA-256, so a stolen
    database holds no usable session.
    """

    __tablename__ = "user_session"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(sa_type=String(64), unique=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    created_at: datetime = Field(sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime, index=True)


class ReviewItem(SQLModel, table=True):
    """Scheduling state of one item: a card's answer (follow_up "") or one follow-up."""

    __tablename__ = "review_item"
    __table_args__ = (
        UniqueConstraint("user_id", "card_id", "follow_up"),
        Index(None, "user_id", "due"),
        Index(None, "user_id", "first_review"),
    )

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="app_user.id")
    card_id: str = Field(sa_type=String(ID_LENGTH))
    follow_up: str = Field(default=ANSWER, sa_type=String(ID_LENGTH))
    # FSRS card state (1 learning, 2 review, 3 relearning) and its numbers.
    state: int = Field(sa_type=SmallInteger)
    step: int | None = Field(default=None)
    stability: float | None = Field(default=None, sa_type=Float)
    difficulty: float | None = Field(default=None, sa_type=Float)
    due: datetime = Field(sa_type=UTCDateTime)
    last_review: datetime = Field(sa_type=UTCDateTime)
    first_review: datetime = Field(sa_type=UTCDateTime)
    lapses: int = Field(default=0)
    # Scheduled reviews applied so far. Every grade moves it on by one with a
    # conditional UPDATE, so it is also the row version that refuses stale forms.
    version: int = Field(default=0)


class ReviewLog(SQLModel, table=True):
    """One graded review, appended and never changed."""

    __tablename__ = "review_log"
    __table_args__ = (
        UniqueConstraint("user_id", "uid"),
        Index(None, "user_id", "card_id", "follow_up", "reviewed_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    # Names the review everywhere: the one-time token of the form that recorded
    # it, and the key that makes importing the same export twice add nothing.
    uid: str = Field(sa_type=String(UID_LENGTH))
    user_id: int = Field(foreign_key="app_user.id")
    card_id: str = Field(sa_type=String(ID_LENGTH))
    follow_up: str = Field(default=ANSWER, sa_type=String(ID_LENGTH))
    rating: int = Field(sa_type=SmallInteger)  # 1 Again, 2 Hard, 3 Good, 4 Easy
    answer: str = Field(default="", sa_type=Text)
    duration_ms: int = Field(default=0)
    reviewed_at: datetime = Field(sa_type=UTCDateTime)
    # A "practice anyway" review: counted in the stats, ignored by the schedule.
    practice: bool = Field(default=False, sa_type=Boolean)


class ChoiceAttempt(SQLModel, table=True):
    """One multiple-choice answer, appended and never changed."""

    __tablename__ = "choice_attempt"
    __table_args__ = (UniqueConstraint("user_id", "uid"),)

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_type=String(UID_LENGTH))
    user_id: int = Field(foreign_key="app_user.id")
    card_id: str = Field(sa_type=String(ID_LENGTH))
    choice: str = Field(sa_type=String(8))  # "a", "b", ... in the order written then
    # The option's text then: the letters move when an author reorders options.
    choice_text: str = Field(default="", sa_type=Text)
    # The option's identity: the key of the red flag a wrong option shows ("" for the
    # correct one, and for attempts from before revision 0008).
    red_flag: str = Field(
        default="", sa_type=String(ID_LENGTH), sa_column_kwargs={"server_default": ""}
    )
    correct: bool = Field(sa_type=Boolean)
    attempted_at: datetime = Field(sa_type=UTCDateTime)


class DailyActivity(SQLModel, table=True):
    """Totals for one user and one local day (in the configured time zone)."""

    __tablename__ = "daily_activity"

    user_id: int = Field(foreign_key="app_user.id", primary_key=True)
    day: date = Field(sa_type=Date, primary_key=True)
    reviews: int = Field(default=0)
    recalled: int = Field(default=0)  # reviews rated Hard, Good or Easy
    choices: int = Field(default=0)
    choices_correct: int = Field(default=0)


class CardActivity(SQLModel, table=True):
    """Totals for one user and one card id, split by part, for accuracy per deck and part."""

    __tablename__ = "card_activity"

    user_id: int = Field(foreign_key="app_user.id", primary_key=True)
    card_id: str = Field(sa_type=String(ID_LENGTH), primary_key=True)
    answer_reviews: int = Field(default=0)
    answer_recalled: int = Field(default=0)
    follow_up_reviews: int = Field(default=0)
    follow_up_recalled: int = Field(default=0)
    choices: int = Field(default=0)
    choices_correct: int = Field(default=0)
    last_activity: datetime = Field(sa_type=UTCDateTime)


class DemoResult(SQLModel, table=True):
    """A demo's result, cached under its demo, version and every parameter.

    Written once per key and read by every web replica, so a card's live
    numbers come from here after their first run, even across restarts.
    Not progress: deleting the table only costs recomputation.
    """

    __tablename__ = "demo_result"

    key: str = Field(primary_key=True, max_length=64)  # sha256 hex: DemoSpec.cache_key
    demo: str = Field(max_length=64, index=True)
    version: int
    result: str = Field(sa_type=Text)  # the worker's JSON answer
    created_at: datetime = Field(sa_type=UTCDateTime)


class LoginFailure(SQLModel, table=True):
    """One sign-in attempt that counts against a name or a client address (app.accounts.limits).

    In the database, not in a process, so every web replica sees the same
    counts and a restart forgets nothing. Rows older than the window are
    deleted as new attempts come in; none of this is progress.
    """

    __tablename__ = "login_failure"
    __table_args__ = (Index(None, "scope", "key", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str = Field(sa_type=String(8))  # "account" or "address"
    key: str = Field(sa_type=String(KEY_LENGTH))  # the lower-cased name, or the address
    at: datetime = Field(sa_type=UTCDateTime, index=True)


class InterviewRound(SQLModel, table=True):
    """One mock interview: what was asked for, its clock, and how far it has gone.

    ``finished_at`` is set when answering ends (the last question answered, or
    the round ended early), ``graded_at`` and ``score`` once, when the learner
    grades it; each by an UPDATE that applies only while the column is empty.
    """

    __tablename__ = "interview_round"
    __table_args__ = (UniqueConstraint("user_id", "uid"), Index(None, "user_id", "started_at"))

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_type=String(UID_LENGTH))  # names the round in its URL and in exports
    user_id: int = Field(foreign_key="app_user.id")
    decks: str = Field(default="", sa_type=Text)  # deck names, comma-separated; "" = every deck
    weakest: bool = Field(default=False, sa_type=Boolean)  # "my weakest" instead of decks
    mix: str = Field(sa_type=String(16))  # app.practice.interview: MIXES
    minutes: int
    started_at: datetime = Field(sa_type=UTCDateTime)
    ends_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    graded_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    score: int | None = Field(default=None, sa_type=SmallInteger)  # percent, once graded


class InterviewQuestion(SQLModel, table=True):
    """One question of a round, planned at its start: a card's question or one follow-up."""

    __tablename__ = "interview_question"
    __table_args__ = (UniqueConstraint("round_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    round_id: int = Field(foreign_key="interview_round.id")
    position: int  # 0, 1, ... in the order asked
    card_id: str = Field(sa_type=String(ID_LENGTH))
    follow_up: str = Field(default=ANSWER, sa_type=String(ID_LENGTH))
    minutes: int  # the time it is given
    asked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    answered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class InterviewAnswer(SQLModel, table=True):
    """One save of a typed answer, appended and never changed: the latest is the answer."""

    __tablename__ = "interview_answer"
    __table_args__ = (Index(None, "question_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(foreign_key="interview_question.id")
    text: str = Field(default="", sa_type=Text)
    saved_at: datetime = Field(sa_type=UTCDateTime)


class InterviewGrade(SQLModel, table=True):
    """How the learner graded one answer: appended once (the unique key refuses a second).

    The key points and red flags are kept as their text then (JSON lists), so
    the report reads the same after an author rewords the card.
    """

    __tablename__ = "interview_grade"
    __table_args__ = (UniqueConstraint("question_id"),)

    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(foreign_key="interview_question.id")
    score: int = Field(sa_type=SmallInteger)  # percent
    rating: int = Field(sa_type=SmallInteger)  # what went to the schedule: 1 Again ... 4 Easy
    covered: str = Field(default="[]", sa_type=Text)  # key points ticked
    missed: str = Field(default="[]", sa_type=Text)  # key points not ticked
    coverage: int | None = Field(default=None, sa_type=SmallInteger)  # a follow-up: 0-3
    red_flags: str = Field(default="[]", sa_type=Text)  # [[key, title], ...] of those hit
    review_uid: str = Field(sa_type=String(UID_LENGTH))  # the review_log row it recorded
    graded_at: datetime = Field(sa_type=UTCDateTime)

"""Practice: review items, the queue, grading, FSRS schedules, stats and progress files.

Everything a learner's history is made of and computed from. Functions take a
SQLAlchemy session and a :class:`~app.practice.activity.Learner`; they know
nothing of HTTP.

May import: :mod:`app.content`, :mod:`app.storage` and itself. Never the web,
the CLI or torch (tests/test_architecture.py).
"""

from app.practice.activity import Learner
from app.practice.errors import (
    AlreadyRecorded,
    ReviewConflict,
    ReviewError,
    StaleItem,
    UnknownItem,
)
from app.practice.forecast import describe_when, due_forecast
from app.practice.grading import (
    MAX_ANSWER_LENGTH,
    MAX_DURATION_MS,
    Graded,
    check_form,
    grade,
    intervals,
    is_token,
    new_token,
    recorded_review,
)
from app.practice.items import Item, card_items, deck_names, find_item, item_key
from app.practice.queue import (
    Due,
    QueueStatus,
    forget_archived,
    next_item,
    next_practice,
    queue_status,
)
from app.practice.scheduling import Rating, Schedule, Scheduler
from app.practice.stored import (
    Rebuilt,
    current_schedule,
    load_schedules,
    rebuild_schedule,
    replay_log,
    schedule_of,
)

__all__ = [
    "MAX_ANSWER_LENGTH",
    "MAX_DURATION_MS",
    "AlreadyRecorded",
    "Due",
    "Graded",
    "Item",
    "Learner",
    "QueueStatus",
    "Rating",
    "Rebuilt",
    "ReviewConflict",
    "ReviewError",
    "Schedule",
    "Scheduler",
    "StaleItem",
    "UnknownItem",
    "card_items",
    "check_form",
    "current_schedule",
    "deck_names",
    "describe_when",
    "due_forecast",
    "find_item",
    "forget_archived",
    "grade",
    "intervals",
    "is_token",
    "item_key",
    "load_schedules",
    "new_token",
    "next_item",
    "next_practice",
    "queue_status",
    "rebuild_schedule",
    "recorded_review",
    "replay_log",
    "schedule_of",
]

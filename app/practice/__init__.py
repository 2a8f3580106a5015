"""Practice: review items, the queue, grading, FSRS schedules, stats and progress files.

Everything a learner's history is made of and computed from. Functions take a
SQLAlchemy session and a :class:`~app.practice.activity.Learner`; they know
nothing of HTTP.

May import: :mod:`app.content`, :mod:`app.storage` and itself. Never the web,
the CLI or torch (tests/test_architecture.py).
"""

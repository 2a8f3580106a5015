"""Why a grade cannot be recorded, or a mock interview step cannot be taken.

Each message says what happened and what to do; the web maps the classes to
statuses. :class:`ReviewConflict` and its subclasses are about what happened
since the item was shown (a second click, another tab), not a bad request.
"""


class ReviewError(Exception):
    """A grade that cannot be recorded; the message says why and what to do."""


class UnknownItem(ReviewError):
    pass


class BadCursor(ReviewError):
    """A practice cursor (``after``) that names no row: forged, or cut short."""


class ReviewConflict(ReviewError):
    """The grade was not recorded because of what happened since the item was shown."""


class AlreadyRecorded(ReviewConflict):
    pass


class StaleItem(ReviewConflict):
    pass


class InterviewError(Exception):
    """A mock interview request that cannot be done; the message says why and what to do."""


class UnknownRound(InterviewError):
    """No such round for this learner: another learner's round is unknown too (404)."""


class RoundConflict(InterviewError):
    """The round is not where the form expects it: answered, finished, graded, or not yet (409)."""

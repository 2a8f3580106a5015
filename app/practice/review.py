"""The review queue: which item comes next, recording a grade, rebuilding the schedule.

A review *item* is a card's answer or one of its follow-ups; each has its own
schedule, so a follow-up can be due while its card is not. Items are named by
:func:`item_key`: ``card-id`` for the answer, ``card-id/follow-up-key`` for a
follow-up (neither part can contain ``/``).

The queue serves, in order: items due now (earliest first), then new items in
content order, at most ``new_per_day`` a day. "Practice anyway" walks the
items by due date without moving them (:func:`next_practice`).

Grading (:func:`grade`) is safe against double clicks, replays and races:

- the form carries a one-time token that becomes the review's ``uid``; a token
  already in the log is :class:`AlreadyRecorded`;
- it also carries the item's ``version`` when it was shown; the state is
  written with ``UPDATE ... WHERE version = shown`` (or an INSERT that the
  unique key refuses for a new item), so of two grades of one shown item
  exactly one is applied and the other is :class:`StaleItem`;
- the log row, the new state and the activity totals commit together, or not
  at all.

Rows of items whose card or follow-up left the content stay in the database;
they are *archived*: never served, and shown apart in the stats.
"""

import functools
import secrets
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.card import Card, FollowUp
from app.content.library import Snapshot
from app.practice import activity
from app.practice.activity import Learner
from app.practice.scheduling import Rating, Schedule, Scheduler, State, describe_interval
from app.storage.models import ANSWER, ReviewItem, ReviewLog, UTCDateTime

TOKEN_LENGTH = 32
MAX_ANSWER_LENGTH = 20_000  # characters of a typed answer; the forms say so too
MAX_DURATION_MS = 60 * 60 * 1000  # longer than an hour is a tab left open, not thinking time
_DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}
_WALK = 20  # rows fetched at a time while skipping archived items
_CHECK = 200  # cards checked at a time for items never reviewed


class ReviewError(Exception):
    """A grade that cannot be recorded; the message says why and what to do."""


class UnknownItem(ReviewError):
    pass


class ReviewConflict(ReviewError):
    """The grade was not recorded because of what happened since the item was shown."""


class AlreadyRecorded(ReviewConflict):
    pass


class StaleItem(ReviewConflict):
    pass


# -- Items -------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One review item: a card's answer, or one of its follow-ups."""

    card: Card
    follow_up: FollowUp | None = None

    @property
    def key(self) -> str:
        return item_key(self.card.id, self.follow_up_key)

    @property
    def follow_up_key(self) -> str:
        return self.follow_up.key if self.follow_up else ANSWER

    @property
    def part(self) -> Literal["answer", "follow-up"]:
        return "follow-up" if self.follow_up else "answer"


def item_key(card_id: str, follow_up: str) -> str:
    return f"{card_id}/{follow_up}" if follow_up else card_id


def find_item(snapshot: Snapshot, key: str) -> Item:
    """The item named ``key`` in the current content; :class:`UnknownItem` says what is missing."""
    card_id, _, follow_up = key.partition("/")
    card = snapshot.cards.get(card_id)
    if card is None:
        raise UnknownItem(
            f"There is no review item '{key}': no card has the id '{card_id}' "
            "(it may have been removed from the content)."
        )
    if not follow_up:
        return Item(card)
    found = next((f for f in card.follow_ups if f.key == follow_up), None)
    if found is None:
        keys = ", ".join(f.key for f in card.follow_ups) or "none"
        raise UnknownItem(
            f"There is no review item '{key}': card '{card_id}' has no follow-up "
            f"'{follow_up}' (its follow-ups: {keys})."
        )
    return Item(card, found)


def card_items(card: Card) -> list[Item]:
    return [Item(card), *(Item(card, follow_up) for follow_up in card.follow_ups)]


class _ContentIndex:
    """The live items of one snapshot, in the order new items are introduced."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        cards = sorted(
            snapshot.cards.values(),
            key=lambda c: (c.deck, _DIFFICULTY_ORDER.get(c.difficulty, 1), c.title.casefold()),
        )
        self.cards: dict[str | None, list[Card]] = {None: cards}
        for card in cards:
            self.cards.setdefault(card.deck, []).append(card)
        self.item_count = {
            deck: sum(1 + len(c.follow_ups) for c in deck_cards)
            for deck, deck_cards in self.cards.items()
        }

    def is_live(self, card_id: str, follow_up: str) -> bool:
        card = self.snapshot.cards.get(card_id)
        if card is None:
            return False
        return follow_up == ANSWER or any(f.key == follow_up for f in card.follow_ups)


def deck_names(snapshot: Snapshot) -> list[str]:
    """The decks of the content, sorted; read from the cached index, not re-sorted per call."""
    return sorted(name for name in _index(snapshot).cards if name is not None)


_index_lock = threading.Lock()
_index_cache: list[_ContentIndex] = []


def _index(snapshot: Snapshot) -> _ContentIndex:
    # The library swaps in a new Snapshot object on every reload: one cached index.
    with _index_lock:
        if not _index_cache or _index_cache[0].snapshot is not snapshot:
            _index_cache[:] = [_ContentIndex(snapshot)]
        return _index_cache[0]


@dataclass(frozen=True)
class _Archived:
    """Reviewed items no longer in the content, left out of every query."""

    snapshot: Snapshot
    cards: frozenset[str]
    follow_ups: frozenset[tuple[str, str]]  # (card_id, key) of live cards


_archived_lock = threading.Lock()
_archived_cache: dict[tuple[str, int], _Archived] = {}


def _archived(session: Session, user_id: int, snapshot: Snapshot) -> _Archived:
    """The learner's archived items for this snapshot, read once per content reload.

    Grading only ever adds live items, so the set changes only when the content
    or an import does; a stale set costs speed, not correctness (every item is
    checked against the content before it is served).
    """
    cache_key = (str(session.get_bind().engine.url), user_id)
    with _archived_lock:
        cached = _archived_cache.get(cache_key)
    if cached is not None and cached.snapshot is snapshot:
        return cached
    index = _index(snapshot)
    cards: set[str] = set()
    follow_ups: set[tuple[str, str]] = set()
    rows = session.execute(
        select(col(ReviewItem.card_id), col(ReviewItem.follow_up)).where(
            col(ReviewItem.user_id) == user_id
        )
    )
    for card_id, follow_up in rows:
        if card_id not in snapshot.cards:
            cards.add(card_id)
        elif not index.is_live(card_id, follow_up):
            follow_ups.add((card_id, follow_up))
    found = _Archived(snapshot, frozenset(cards), frozenset(follow_ups))
    with _archived_lock:
        _archived_cache[cache_key] = found
    return found


def forget_cached_items() -> None:
    """Drop the cached archived sets (after an import or a rebuild in this process)."""
    with _archived_lock:
        _archived_cache.clear()


def _live_filter(
    session: Session, user_id: int, snapshot: Snapshot, deck: str | None
) -> list[ColumnElement[bool]]:
    archived = _archived(session, user_id, snapshot)
    conditions: list[ColumnElement[bool]] = [col(ReviewItem.user_id) == user_id]
    if archived.cards:
        conditions.append(col(ReviewItem.card_id).not_in(archived.cards))
    if archived.follow_ups:
        conditions.append(
            tuple_(col(ReviewItem.card_id), col(ReviewItem.follow_up)).not_in(
                list(archived.follow_ups)
            )
        )
    if deck is not None:
        conditions.append(col(ReviewItem.card_id).in_([c.id for c in _index(snapshot).cards[deck]]))
    return conditions


# -- Schedules ---------------------------------------------------------------


def schedule_of(row: ReviewItem) -> Schedule:
    return Schedule(
        state=State(row.state),
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        due=row.due,
        last_review=row.last_review,
        first_review=row.first_review,
        lapses=row.lapses,
        version=row.version,
    )


def _columns(schedule: Schedule) -> dict[str, Any]:
    return {
        "state": int(schedule.state),
        "step": schedule.step,
        "stability": schedule.stability,
        "difficulty": schedule.difficulty,
        "due": schedule.due,
        "last_review": schedule.last_review,
        "first_review": schedule.first_review,
        "lapses": schedule.lapses,
        "version": schedule.version,
    }


def _row(session: Session, user_id: int, card_id: str, follow_up: str) -> ReviewItem | None:
    return session.scalars(
        select(ReviewItem).where(
            col(ReviewItem.user_id) == user_id,
            col(ReviewItem.card_id) == card_id,
            col(ReviewItem.follow_up) == follow_up,
        )
    ).one_or_none()


def current_schedule(session: Session, user_id: int, item: Item, now: datetime) -> Schedule:
    """The item's stored state, or a new item's state when it was never graded."""
    row = _row(session, user_id, item.card.id, item.follow_up_key)
    return schedule_of(row) if row is not None else Schedule.new(now)


# -- The queue ---------------------------------------------------------------


@dataclass(frozen=True)
class Due:
    """The item to show next, with its state when shown."""

    item: Item
    schedule: Schedule
    is_new: bool
    cursor: str = ""  # where "practice anyway" goes on from after this item


@dataclass(frozen=True)
class QueueStatus:
    due_now: int
    new_left_today: int  # new items the queue will still introduce today
    new_waiting: int  # items never reviewed, in the current deck filter
    new_per_day: int
    next_due: datetime | None  # the earliest item due later, when nothing is due now

    @property
    def new_limit_reached(self) -> bool:
        return self.new_left_today == 0 and self.new_waiting > 0


def _first_live(
    session: Session,
    snapshot: Snapshot,
    conditions: list[ColumnElement[bool]],
    *,
    after: tuple[datetime, int] | None = None,
) -> ReviewItem | None:
    """The earliest-due live row matching ``conditions`` (after ``after``, a (due, id) pair).

    Rows of removed content are skipped here too, in case the archived set is stale.
    """
    index = _index(snapshot)
    bound = after
    while True:
        query = select(ReviewItem).where(*conditions)
        if bound is not None:
            query = query.where(
                or_(
                    col(ReviewItem.due) > bound[0],
                    and_(col(ReviewItem.due) == bound[0], col(ReviewItem.id) > bound[1]),
                )
            )
        rows = session.scalars(
            query.order_by(col(ReviewItem.due), col(ReviewItem.id)).limit(_WALK)
        ).all()
        for row in rows:
            if index.is_live(row.card_id, row.follow_up):
                return row
        if len(rows) < _WALK:
            return None
        last = rows[-1]
        assert last.id is not None
        bound = (last.due, last.id)


def _unreviewed(
    session: Session, user_id: int, cards: list[Card], *, start_after: str | None = None
) -> Iterator[Item]:
    """Items of ``cards`` never reviewed, in order, from just after the item ``start_after``."""
    items = [item for card in cards for item in card_items(card)]
    if start_after is not None:
        keys = [item.key for item in items]
        items = items[keys.index(start_after) + 1 :] if start_after in keys else []
    for begin in range(0, len(items), _CHECK):
        chunk = items[begin : begin + _CHECK]
        card_ids = list({item.card.id for item in chunk})
        rows = session.execute(
            select(col(ReviewItem.card_id), col(ReviewItem.follow_up)).where(
                col(ReviewItem.user_id) == user_id, col(ReviewItem.card_id).in_(card_ids)
            )
        )
        reviewed = {(card_id, follow_up) for card_id, follow_up in rows}
        for item in chunk:
            if (item.card.id, item.follow_up_key) not in reviewed:
                yield item


def queue_status(
    session: Session,
    learner: Learner,
    *,
    snapshot: Snapshot,
    now: datetime,
    new_per_day: int,
    deck: str | None = None,
) -> QueueStatus:
    conditions = _live_filter(session, learner.user_id, snapshot, deck)
    total, due_now = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((col(ReviewItem.due) <= now, 1), else_=0)), 0),
        ).where(*conditions)
    ).one()
    introduced_today = session.scalar(
        select(func.count()).where(
            col(ReviewItem.user_id) == learner.user_id,
            col(ReviewItem.first_review) >= learner.start_of(learner.day_of(now)),
        )
    )
    new_waiting = max(0, _index(snapshot).item_count.get(deck, 0) - total)
    new_left = min(max(0, new_per_day - (introduced_today or 0)), new_waiting)
    next_due = None
    if not due_now:
        next_due = session.scalar(
            select(func.min(ReviewItem.due)).where(*conditions, col(ReviewItem.due) > now)
        )
    return QueueStatus(due_now, new_left, new_waiting, new_per_day, next_due)


def next_item(
    session: Session,
    learner: Learner,
    *,
    snapshot: Snapshot,
    now: datetime,
    new_per_day: int,
    deck: str | None = None,
) -> tuple[Due | None, QueueStatus]:
    """The next item to review (due, then new within today's limit) and the queue's counts."""
    status = queue_status(
        session, learner, snapshot=snapshot, now=now, new_per_day=new_per_day, deck=deck
    )
    if status.due_now:
        conditions = _live_filter(session, learner.user_id, snapshot, deck)
        row = _first_live(session, snapshot, [*conditions, col(ReviewItem.due) <= now])
        if row is not None:
            item = find_item(snapshot, item_key(row.card_id, row.follow_up))
            return Due(item, schedule_of(row), is_new=False), status
    if status.new_left_today:
        cards = _index(snapshot).cards.get(deck, [])
        new = next(_unreviewed(session, learner.user_id, cards), None)
        if new is not None:
            return Due(new, Schedule.new(now), is_new=True), status
    return None, status


def next_practice(
    session: Session,
    learner: Learner,
    *,
    snapshot: Snapshot,
    now: datetime,
    after: str = "",
    deck: str | None = None,
) -> Due | None:
    """The next item for "practice anyway": reviewed items by due date, then unreviewed ones.

    ``after`` is the cursor of the item practised last ("" to start): ``r<row id>``
    while walking reviewed items, ``n<item key>`` while walking unreviewed ones.
    """
    if not after.startswith("n"):
        conditions = _live_filter(session, learner.user_id, snapshot, deck)
        bound: tuple[datetime, int] | None = None
        if after.startswith("r") and after[1:].isdigit():
            previous = session.get(ReviewItem, int(after[1:]))
            if previous is not None and previous.id is not None:
                bound = (previous.due, previous.id)
        row = _first_live(session, snapshot, conditions, after=bound)
        if row is not None:
            item = find_item(snapshot, item_key(row.card_id, row.follow_up))
            return Due(item, schedule_of(row), is_new=False, cursor=f"r{row.id}")
    cards = _index(snapshot).cards.get(deck, [])
    start_after = after[1:] if after.startswith("n") else None
    new = next(_unreviewed(session, learner.user_id, cards, start_after=start_after), None)
    if new is None:
        return None
    return Due(new, Schedule.new(now), is_new=True, cursor=f"n{new.key}")


# -- Grading -----------------------------------------------------------------


def new_token() -> str:
    """A one-time token for a review form: it becomes the uid of the review it records."""
    return secrets.token_hex(TOKEN_LENGTH // 2)


def is_token(text: str) -> bool:
    return len(text) == TOKEN_LENGTH and all(c in "0123456789abcdef" for c in text)


@dataclass(frozen=True)
class Graded:
    item: Item
    rating: Rating
    practice: bool
    schedule: Schedule | None  # the new state; None for practice, which changes nothing

    @property
    def back_in(self) -> str | None:
        if self.schedule is None or self.schedule.last_review is None:
            return None
        return describe_interval(self.schedule.due - self.schedule.last_review)


def _check_token(session: Session, user_id: int, token: str) -> None:
    if not is_token(token):
        raise ReviewError("This form has no valid review token: reload the review page.")
    used = session.scalar(
        select(col(ReviewLog.id)).where(
            col(ReviewLog.user_id) == user_id, col(ReviewLog.uid) == token
        )
    )
    if used is not None:
        raise AlreadyRecorded(
            "This grade was already recorded (the form was sent twice); it was not counted again."
        )


def check_form(
    session: Session, user_id: int, item: Item, *, version: int, token: str, practice: bool
) -> None:
    """Raise when a shown form can no longer be graded: its token is used or its item moved on."""
    _check_token(session, user_id, token)
    if practice:
        return
    row = _row(session, user_id, item.card.id, item.follow_up_key)
    current = row.version if row is not None else 0
    if current != version:
        raise _stale(item, version, current)


def _stale(item: Item, shown: int, current: int) -> StaleItem:
    return StaleItem(
        f"'{item.card.title}' ({item.part}) was graded since this page was shown "
        f"(review {current} now, {shown} then: another tab, or a second click), "
        "so this grade was not recorded. The next item is below."
    )


def grade(
    session: Session,
    learner: Learner,
    *,
    item: Item,
    rating: Rating,
    version: int,
    token: str,
    now: datetime,
    scheduler: Scheduler,
    answer: str = "",
    duration_ms: int = 0,
    practice: bool = False,
) -> Graded:
    """Record one review: log it, move the item's schedule on (unless practising), count it."""
    user_id = learner.user_id
    check_form(session, user_id, item, version=version, token=token, practice=practice)
    schedule: Schedule | None = None
    if not practice:
        row = _row(session, user_id, item.card.id, item.follow_up_key)
        before = schedule_of(row) if row is not None else Schedule.new(now)
        schedule = scheduler.review(before, rating, now, seed=item.key)
        if row is not None:
            applied = session.execute(
                update(ReviewItem)
                .where(col(ReviewItem.id) == row.id, col(ReviewItem.version) == version)
                .values(**_columns(schedule))
            )
            if applied.rowcount != 1:  # type: ignore[attr-defined]
                session.rollback()
                raise _stale(item, version, version + 1)
        else:
            try:
                session.execute(
                    insert(ReviewItem).values(
                        user_id=user_id,
                        card_id=item.card.id,
                        follow_up=item.follow_up_key,
                        **_columns(schedule),
                    )
                )
            except IntegrityError:
                session.rollback()
                raise _stale(item, version, version + 1) from None
    try:
        session.execute(
            insert(ReviewLog).values(
                uid=token,
                user_id=user_id,
                card_id=item.card.id,
                follow_up=item.follow_up_key,
                rating=int(rating),
                answer=answer,
                duration_ms=max(0, min(duration_ms, MAX_DURATION_MS)),
                reviewed_at=now,
                practice=practice,
            )
        )
    except IntegrityError:
        session.rollback()
        raise AlreadyRecorded(
            "This grade was already recorded (the form was sent twice); it was not counted again."
        ) from None
    activity.count_review(
        session,
        learner,
        card_id=item.card.id,
        follow_up=item.follow_up_key,
        rating=int(rating),
        at=now,
    )
    session.commit()
    return Graded(item, rating, practice, schedule)


def intervals(
    schedule: Schedule, item: Item, now: datetime, scheduler: Scheduler
) -> list[tuple[Rating, str]]:
    """What each grade button promises, e.g. (GOOD, "3 days")."""
    preview = scheduler.preview(schedule, now, seed=item.key)
    return [(rating, describe_interval(preview[rating])) for rating in Rating]


# -- Rebuilding from the log -------------------------------------------------


def load_schedules(session: Session, user_id: int) -> dict[tuple[str, str], Schedule]:
    """Every stored item state of the learner, by (card_id, follow_up)."""
    rows = session.scalars(select(ReviewItem).where(col(ReviewItem.user_id) == user_id))
    return {(row.card_id, row.follow_up): schedule_of(row) for row in rows}


def replay_log(
    session: Session,
    user_id: int,
    scheduler: Scheduler,
    *,
    items: Iterable[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], Schedule]:
    """The item states the review log implies, by (card_id, follow_up); practice is skipped."""
    query = select(
        col(ReviewLog.card_id),
        col(ReviewLog.follow_up),
        col(ReviewLog.rating),
        col(ReviewLog.reviewed_at),
    ).where(col(ReviewLog.user_id) == user_id, col(ReviewLog.practice).is_(False))
    wanted = set(items) if items is not None else None
    if wanted is not None:
        query = query.where(col(ReviewLog.card_id).in_({card_id for card_id, _ in wanted}))
    rows = session.execute(
        query.order_by(
            col(ReviewLog.card_id),
            col(ReviewLog.follow_up),
            col(ReviewLog.reviewed_at),
            col(ReviewLog.id),
        ).execution_options(yield_per=5_000)
    )
    schedules: dict[tuple[str, str], Schedule] = {}
    current: tuple[str, str] | None = None
    schedule = Schedule.new(datetime.now(UTC))
    for card_id, follow_up, rating, at in rows:
        key = (card_id, follow_up)
        if wanted is not None and key not in wanted:
            continue
        if key != current:
            if current is not None:
                schedules[current] = schedule
            current, schedule = key, Schedule.new(at)
        schedule = scheduler.review(schedule, Rating(rating), at, seed=item_key(*key))
    if current is not None:
        schedules[current] = schedule
    return schedules


@dataclass
class Rebuilt:
    items: int
    changed: list[str] = field(default_factory=list)  # item keys whose stored state differed


def rebuild_schedule(
    session: Session,
    user_id: int,
    scheduler: Scheduler,
    *,
    items: Iterable[tuple[str, str]] | None = None,
) -> Rebuilt:
    """Replace stored item states with the ones the log implies (the caller commits)."""
    wanted = set(items) if items is not None else None
    rebuilt = replay_log(session, user_id, scheduler, items=wanted)
    stored = load_schedules(session, user_id)
    if wanted is not None:
        stored = {key: value for key, value in stored.items() if key in wanted}
    changed = sorted(
        item_key(*key) for key in set(rebuilt) | set(stored) if rebuilt.get(key) != stored.get(key)
    )
    mine = col(ReviewItem.user_id) == user_id
    if wanted is None:
        session.execute(delete(ReviewItem).where(mine))
    else:
        pairs = sorted(wanted)
        for begin in range(0, len(pairs), 1_000):
            chunk = pairs[begin : begin + 1_000]
            session.execute(
                delete(ReviewItem).where(
                    mine, tuple_(col(ReviewItem.card_id), col(ReviewItem.follow_up)).in_(chunk)
                )
            )
    rows = [
        {"user_id": user_id, "card_id": card_id, "follow_up": follow_up, **_columns(schedule)}
        for (card_id, follow_up), schedule in rebuilt.items()
    ]
    for begin in range(0, len(rows), 5_000):
        session.execute(insert(ReviewItem), rows[begin : begin + 5_000])
    forget_cached_items()
    return Rebuilt(len(rebuilt), changed)


# -- Forecast ----------------------------------------------------------------


@functools.cache
def _forecast_columns(days: int) -> tuple[ColumnElement[int], ...]:
    """One SUM(CASE ...) per day, bounds as parameters: built once, compiled once."""
    due = col(ReviewItem.due)
    bounds = [bindparam(f"day_end_{n}", type_=UTCDateTime()) for n in range(days)]
    return tuple(
        func.coalesce(
            func.sum(
                case((due < bounds[0], 1), else_=0)
                if n == 0
                else case((and_(due >= bounds[n - 1], due < bounds[n]), 1), else_=0)
            ),
            0,
        )
        for n in range(days)
    )


def due_forecast(
    session: Session, learner: Learner, *, snapshot: Snapshot, now: datetime, days: int = 14
) -> list[tuple[date, int]]:
    """Items due on each of the next ``days`` local days; today includes everything overdue."""
    today = learner.day_of(now)
    ends = {f"day_end_{n}": learner.start_of(today + timedelta(days=n + 1)) for n in range(days)}
    conditions = _live_filter(session, learner.user_id, snapshot, None)
    query = select(*_forecast_columns(days)).where(
        *conditions, col(ReviewItem.due) < ends[f"day_end_{days - 1}"]
    )
    counts = session.execute(query, ends).one()
    return [(today + timedelta(days=n), int(counts[n])) for n in range(days)]


def describe_when(at: datetime, now: datetime, learner: Learner) -> str:
    """``in 3 hours (Tue 14 Jan, 14:05)``: when the next item is due, in the learner's zone."""
    local = at.astimezone(learner.zone)
    return f"in {describe_interval(at - now)} ({local:%a %d %b, %H:%M})"

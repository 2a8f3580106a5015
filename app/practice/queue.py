"""The review queue: which item comes next, and how many are due or waiting.

The queue serves, in order: items due now (earliest first), then new items in
content order, at most ``new_per_day`` a day. "Practice anyway" walks the
items by due date without moving them (:func:`next_practice`).

Rows of items whose card or follow-up left the content stay in the database;
they are *archived*: never served, and shown apart in the stats. Every query
leaves them out (:func:`live_filter`). Each learner's archived set is read
once per content snapshot and kept on it; an import or a rebuild, which can
add archived rows, drops the kept sets (:func:`forget_archived`).
"""

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from cachetools import LRUCache
from sqlalchemy import ColumnElement, and_, case, func, or_, select, tuple_
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.card import Card
from app.content.library import Snapshot
from app.practice.activity import Learner
from app.practice.errors import BadCursor
from app.practice.items import Item, card_items, content_index, find_item, item_key
from app.practice.scheduling import Schedule
from app.practice.stored import schedule_of
from app.storage.models import ReviewItem
from app.storage.values import MAX_INTEGER, whole_number

_WALK = 20  # rows fetched at a time while skipping archived items
_CHECK = 200  # cards checked at a time for items never reviewed
# Learners whose archived sets one snapshot keeps; the least recently used go first.
ARCHIVED_CACHE_SIZE = 1_000


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


# -- Archived items ----------------------------------------------------------


@dataclass(frozen=True)
class _Archived:
    """Reviewed items no longer in the content, left out of every query."""

    cards: frozenset[str]
    follow_ups: frozenset[tuple[str, str]]  # (card_id, key) of live cards


class _ArchivedSets:
    """One snapshot's archived sets, by (database URL, user id); kept on the snapshot."""

    def __init__(self, _snapshot: Snapshot) -> None:
        self.lock = threading.Lock()
        self.sets: LRUCache[tuple[str, int], _Archived] = LRUCache(maxsize=ARCHIVED_CACHE_SIZE)
        self.generation = 0  # counts forget() calls, so a read begun before one is not kept

    def forget(self) -> None:
        with self.lock:
            self.sets.clear()
            self.generation += 1


def _read_archived(session: Session, user_id: int, snapshot: Snapshot) -> _Archived:
    index = content_index(snapshot)
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
    return _Archived(frozenset(cards), frozenset(follow_ups))


def _archived(session: Session, user_id: int, snapshot: Snapshot) -> _Archived:
    """The learner's archived items for this snapshot, read once per content reload.

    Grading only ever adds live items, so the set changes only when the content
    or an import does; a stale set costs speed, not correctness (every item is
    checked against the content before it is served).
    """
    kept = snapshot.derived(_ArchivedSets)
    cache_key = (str(session.get_bind().engine.url), user_id)
    with kept.lock:
        cached = kept.sets.get(cache_key)
        generation = kept.generation
    if cached is not None:
        return cached
    found = _read_archived(session, user_id, snapshot)
    with kept.lock:
        if kept.generation == generation:
            kept.sets[cache_key] = found
    return found


def forget_archived(snapshot: Snapshot) -> None:
    """Drop the snapshot's archived sets (after an import or a rebuild in this process)."""
    snapshot.derived(_ArchivedSets).forget()


def live_filter(
    session: Session, user_id: int, snapshot: Snapshot, deck: str | None
) -> list[ColumnElement[bool]]:
    """Conditions on ``ReviewItem`` that keep the learner's live items (of ``deck``, if given)."""
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
        deck_cards = content_index(snapshot).cards[deck]
        conditions.append(col(ReviewItem.card_id).in_([c.id for c in deck_cards]))
    return conditions


# -- The queue ---------------------------------------------------------------


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
    index = content_index(snapshot)
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
    conditions = live_filter(session, learner.user_id, snapshot, deck)
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
    new_waiting = max(0, content_index(snapshot).item_count.get(deck, 0) - total)
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
        conditions = live_filter(session, learner.user_id, snapshot, deck)
        row = _first_live(session, snapshot, [*conditions, col(ReviewItem.due) <= now])
        if row is not None:
            item = find_item(snapshot, item_key(row.card_id, row.follow_up))
            return Due(item, schedule_of(row), is_new=False), status
    if status.new_left_today:
        cards = content_index(snapshot).cards.get(deck, [])
        new = next(_unreviewed(session, learner.user_id, cards), None)
        if new is not None:
            return Due(new, Schedule.new(now), is_new=True), status
    return None, status


def _practised(session: Session, user_id: int, after: str) -> tuple[datetime, int] | None:
    """Where a practice walk of reviewed items goes on from: the (due, id) of ``r<id>``.

    Only the learner's own rows are looked up: another learner's id, or a row
    a rebuild removed, starts the walk from the beginning.
    """
    if not after:
        return None
    number = whole_number(after[1:]) if after.startswith("r") else None
    if number is None:
        raise BadCursor(
            f"after must be 'r' and a review item's number (up to {MAX_INTEGER}), or 'n' "
            f"and an item key, not '{after}': start again from the review page."
        )
    due = session.scalar(
        select(col(ReviewItem.due)).where(
            col(ReviewItem.id) == number, col(ReviewItem.user_id) == user_id
        )
    )
    return (due, number) if due is not None else None


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
        conditions = live_filter(session, learner.user_id, snapshot, deck)
        bound = _practised(session, learner.user_id, after)
        row = _first_live(session, snapshot, conditions, after=bound)
        if row is not None:
            item = find_item(snapshot, item_key(row.card_id, row.follow_up))
            return Due(item, schedule_of(row), is_new=False, cursor=f"r{row.id}")
    cards = content_index(snapshot).cards.get(deck, [])
    start_after = after[1:] if after.startswith("n") else None
    new = next(_unreviewed(session, learner.user_id, cards, start_after=start_after), None)
    if new is None:
        return None
    return Due(new, Schedule.new(now), is_new=True, cursor=f"n{new.key}")

"""Renamed cards keep their history: rows under a card's old ids move to its id.

A card lists its former ids in ``aliases:``, a follow-up its former keys in
``{#key was=old-key}``. :func:`adopt_aliases` runs when the content is loaded
(at start-up and on every reload) and moves each learner's schedules (review
items) and per-card totals from an alias to the card's id, then each renamed
follow-up's schedules to its key, in one transaction. A learner who already
has a row under the new id or key keeps it; the old totals are added to it,
and of two schedules the one under the new name (the newer) is kept. Running
it again moves nothing.

The review log and the multiple-choice attempts are append-only (the database
refuses updates), so they keep the id they were written under; a schedule
rebuilt from the log comes back under the old id and is moved again on the
next load.
"""

from collections.abc import Iterable

from sqlalchemy import and_, delete, exists, select, update
from sqlalchemy.orm import Session, aliased
from sqlmodel import col

from app.content.card import Card
from app.storage.models import CardActivity, ReviewItem

_TOTALS = (
    "answer_reviews",
    "answer_recalled",
    "follow_up_reviews",
    "follow_up_recalled",
    "choices",
    "choices_correct",
)


def renames(cards: Iterable[Card]) -> dict[str, str]:
    """Old id -> current id, for every alias of every card."""
    return {alias: card.id for card in cards for alias in card.aliases}


def key_renames(cards: Iterable[Card]) -> dict[tuple[str, str], str]:
    """(card id, old follow-up key) -> current key, for every ``was=`` of every follow-up."""
    return {
        (card.id, old): follow_up.key
        for card in cards
        for follow_up in card.follow_ups
        for old in follow_up.aliases
    }


def adopt_aliases(session: Session, cards: Iterable[Card]) -> int:
    """Move history from each alias to its card's id and key; the number of rows moved.

    The caller commits.
    """
    cards = list(cards)
    moved = 0
    for old, new in renames(cards).items():
        moved += _move_items(session, (old, None), (new, None))
        moved += _move_totals(session, old, new)
    # After the cards: a follow-up renamed along with its card is found under the new id.
    for (card_id, old_key), new_key in key_renames(cards).items():
        moved += _move_items(session, (card_id, old_key), (card_id, new_key))
    return moved


def _move_items(session: Session, old: tuple[str, str | None], new: tuple[str, str | None]) -> int:
    """Move schedules from ``old`` to ``new``: (card id, follow-up key, or None for all)."""
    (old_id, old_key), (new_id, new_key) = old, new
    taken = aliased(ReviewItem)
    clash = exists().where(
        and_(
            col(taken.user_id) == col(ReviewItem.user_id),
            col(taken.card_id) == new_id,
            col(taken.follow_up) == (col(ReviewItem.follow_up) if new_key is None else new_key),
        )
    )
    where = [col(ReviewItem.card_id) == old_id]
    if old_key is not None:
        where.append(col(ReviewItem.follow_up) == old_key)
    values = {"card_id": new_id} if new_key is None else {"follow_up": new_key}
    result = session.execute(update(ReviewItem).where(*where, ~clash).values(**values))
    # What is left clashes with a schedule under the new name, which is newer: keep it.
    session.execute(delete(ReviewItem).where(*where))
    return int(result.rowcount)  # type: ignore[attr-defined]


def _move_totals(session: Session, old: str, new: str) -> int:
    rows = session.scalars(select(CardActivity).where(col(CardActivity.card_id) == old)).all()
    for row in rows:
        target = session.scalar(
            select(CardActivity).where(
                col(CardActivity.user_id) == row.user_id, col(CardActivity.card_id) == new
            )
        )
        if target is None:
            session.add(
                CardActivity(
                    user_id=row.user_id,
                    card_id=new,
                    last_activity=row.last_activity,
                    **{name: getattr(row, name) for name in _TOTALS},
                )
            )
        else:
            for name in _TOTALS:
                setattr(target, name, getattr(target, name) + getattr(row, name))
            target.last_activity = max(target.last_activity, row.last_activity)
        session.delete(row)
    session.flush()
    return len(rows)

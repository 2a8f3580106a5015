"""What a round asks: main questions that fill its length, each with the follow-ups missed most.

Main questions come from the chosen decks, least recently practised first
(never practised first of all), or, for "my weakest", from every deck in
order of retention, lowest first: the share of the card's reviews recalled,
as the stats page counts it, with cards never reviewed last. Ties are broken
by a hash of the round, so two rounds over the same decks differ.

Each card brings one or two of its follow-ups, chosen by the learner's
history, not at random: most lapses first, then the lowest average grade;
a follow-up never graded ranks between Hard and Good, so one the learner got
wrong comes before it and one they know comes after.
"""

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.card import Card, FollowUp
from app.content.library import Snapshot
from app.practice.errors import InterviewError
from app.practice.items import Item, content_index
from app.storage.models import ANSWER, CardActivity, ReviewItem, ReviewLog

LENGTHS = (15, 30, 45)  # minutes a round may last
# Difficulty mixes: the card difficulties each lets in, and how the form names it.
MIXES: dict[str, tuple[tuple[str, ...], str]] = {
    "mixed": (("easy", "medium", "hard"), "Mixed: every difficulty"),
    "easier": (("easy", "medium"), "Easier: easy and medium"),
    "harder": (("medium", "hard"), "Harder: medium and hard"),
}
FOLLOW_UPS_PER_CARD = 2
_NEVER_GRADED = 2.5  # between Hard (2) and Good (3)
_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Planned:
    """One question of the plan and the minutes it is given."""

    item: Item
    minutes: int


@dataclass(frozen=True)
class Request:
    """What the learner asked for on the start form."""

    decks: tuple[str, ...]  # empty: every deck
    weakest: bool
    mix: str
    minutes: int


def follow_up_minutes(card: Card) -> int:
    """A follow-up gets half the card's minutes, at least one: it goes deeper on one point."""
    return max(1, -(-card.minutes // 2))


def plan(
    session: Session, user_id: int, snapshot: Snapshot, request: Request, *, seed: str
) -> list[Planned]:
    """The round's questions in the order asked: each main question, then its follow-ups."""
    cards = _candidates(snapshot, request)
    order = (
        _weakest_first(session, user_id, cards, seed)
        if request.weakest
        else _least_recent_first(session, user_id, cards, seed)
    )
    misses = _misses(session, user_id, order)
    planned: list[Planned] = []
    used = 0
    for card in order:
        follow_ups = _ranked_follow_ups(card, misses)[:FOLLOW_UPS_PER_CARD]
        if used + _cost(card, follow_ups) > request.minutes:
            follow_ups = follow_ups[:1]  # every main question brings at least one follow-up
        if used + _cost(card, follow_ups) > request.minutes and planned:
            continue  # too long for what is left; a shorter card may still fit
        planned.append(Planned(Item(card), card.minutes))
        planned += [Planned(Item(card, f), follow_up_minutes(card)) for f in follow_ups]
        used += _cost(card, follow_ups)
    return planned


def _cost(card: Card, follow_ups: Sequence[FollowUp]) -> int:
    return card.minutes + len(follow_ups) * follow_up_minutes(card)


def _candidates(snapshot: Snapshot, request: Request) -> list[Card]:
    index = content_index(snapshot)
    known = [deck for deck in index.cards if deck is not None]
    unknown = [deck for deck in request.decks if deck not in known]
    if unknown:
        raise InterviewError(
            f"There is no deck called '{unknown[0]}' (decks: {', '.join(sorted(known))})."
        )
    if request.mix not in MIXES:
        raise InterviewError(f"The mix must be one of {', '.join(MIXES)}, not '{request.mix}'.")
    if request.minutes not in LENGTHS:
        lengths = ", ".join(str(n) for n in LENGTHS)
        raise InterviewError(f"A round lasts {lengths} minutes, not {request.minutes}.")
    decks = request.decks or tuple(known)
    allowed = MIXES[request.mix][0]
    cards = [c for d in decks for c in index.cards[d] if c.difficulty in allowed]
    if not cards:
        raise InterviewError(
            f"No card in {', '.join(decks)} is {' or '.join(allowed)} "
            "(the difficulty mix): choose another mix or more decks."
        )
    return cards


def _tiebreak(seed: str, card: Card) -> str:
    return hashlib.sha256(f"{seed}/{card.id}".encode()).hexdigest()


def _least_recent_first(session: Session, user_id: int, cards: list[Card], seed: str) -> list[Card]:
    """Cards whose main question was reviewed longest ago first; never reviewed before all."""
    rows = session.execute(
        select(col(ReviewItem.card_id), col(ReviewItem.last_review)).where(
            col(ReviewItem.user_id) == user_id,
            col(ReviewItem.follow_up) == ANSWER,
            col(ReviewItem.card_id).in_([c.id for c in cards]),
        )
    )
    last: dict[str, datetime] = {card_id: at for card_id, at in rows}
    return sorted(cards, key=lambda c: (c.id in last, last.get(c.id, _NEVER), _tiebreak(seed, c)))


def _weakest_first(session: Session, user_id: int, cards: list[Card], seed: str) -> list[Card]:
    """Lowest share recalled first (answers and follow-ups); cards never reviewed last."""
    rows = session.execute(
        select(
            col(CardActivity.card_id),
            col(CardActivity.answer_reviews) + col(CardActivity.follow_up_reviews),
            col(CardActivity.answer_recalled) + col(CardActivity.follow_up_recalled),
        ).where(
            col(CardActivity.user_id) == user_id,
            col(CardActivity.card_id).in_([c.id for c in cards]),
        )
    )
    retention = {card_id: recalled / reviews for card_id, reviews, recalled in rows if reviews}
    return sorted(
        cards,
        key=lambda c: (c.id not in retention, retention.get(c.id, 1.0), _tiebreak(seed, c)),
    )


@dataclass(frozen=True)
class _Missed:
    lapses: int
    mean_rating: float


def _misses(
    session: Session, user_id: int, cards: Iterable[Card]
) -> dict[tuple[str, str], _Missed]:
    """Lapses and mean grade of every follow-up of ``cards`` the learner has graded."""
    card_ids = [card.id for card in cards]
    lapses = {
        (card_id, key): n
        for card_id, key, n in session.execute(
            select(
                col(ReviewItem.card_id), col(ReviewItem.follow_up), col(ReviewItem.lapses)
            ).where(
                col(ReviewItem.user_id) == user_id,
                col(ReviewItem.card_id).in_(card_ids),
                col(ReviewItem.follow_up) != ANSWER,
            )
        )
    }
    ratings = session.execute(
        select(col(ReviewLog.card_id), col(ReviewLog.follow_up), func.avg(ReviewLog.rating))
        .where(
            col(ReviewLog.user_id) == user_id,
            col(ReviewLog.card_id).in_(card_ids),
            col(ReviewLog.follow_up) != ANSWER,
        )
        .group_by(col(ReviewLog.card_id), col(ReviewLog.follow_up))
    )
    return {
        (card_id, key): _Missed(lapses.get((card_id, key), 0), float(mean))
        for card_id, key, mean in ratings
    }


def _ranked_follow_ups(card: Card, misses: dict[tuple[str, str], _Missed]) -> list[FollowUp]:
    """The card's follow-ups, most missed first; the card's own order breaks ties."""

    def rank(numbered: tuple[int, FollowUp]) -> tuple[int, float, int]:
        position, follow_up = numbered
        missed = misses.get((card.id, follow_up.key))
        if missed is None:
            return (0, _NEVER_GRADED, position)
        return (-missed.lapses, missed.mean_rating, position)

    return [follow_up for _, follow_up in sorted(enumerate(card.follow_ups), key=rank)]

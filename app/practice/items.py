"""Review items: a card's answer or one of its follow-ups, and the content's index of them.

Each item has its own schedule, so a follow-up can be due while its card is
not. Items are named by :func:`item_key`: ``card-id`` for the answer,
``card-id/follow-up-key`` for a follow-up (neither part can contain ``/``).

:func:`content_index` orders the live items the way new ones are introduced
(deck, difficulty, title); it is built once per content snapshot and kept on
the snapshot (:meth:`~app.content.library.Snapshot.derived`).
"""

from dataclasses import dataclass
from typing import Literal

from app.content.card import Card, FollowUp
from app.content.library import Snapshot
from app.practice.errors import UnknownItem
from app.storage.models import ANSWER

_DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}


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


class ContentIndex:
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


def content_index(snapshot: Snapshot) -> ContentIndex:
    """The snapshot's index, built on first use; a reload's new snapshot builds its own."""
    return snapshot.derived(ContentIndex)


def deck_names(snapshot: Snapshot) -> list[str]:
    """The decks of the content, sorted; read from the cached index, not re-sorted per call."""
    return sorted(name for name in content_index(snapshot).cards if name is not None)

"""Which decks an export covers: all of them, or those named with ``--deck``."""

from collections.abc import Sequence

from app.content.library import Deck, Snapshot


class UnknownDeck(ValueError):
    """A deck name that the content does not have; the message lists those it has."""


def choose_decks(snapshot: Snapshot, names: Sequence[str] = ()) -> list[Deck]:
    """The named decks in the order given, or every deck when no name is given.

    Raises:
        UnknownDeck: a name matches no deck.
    """
    if not names:
        return snapshot.decks
    chosen: list[Deck] = []
    for name in dict.fromkeys(names):
        deck = snapshot.deck(name)
        if deck is None:
            known = ", ".join(d.name for d in snapshot.decks) or "none"
            raise UnknownDeck(f"there is no deck called '{name}' (decks: {known})")
        chosen.append(deck)
    return chosen

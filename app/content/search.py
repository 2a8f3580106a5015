"""Search: the cards that match a query, best first.

A card matches when every word of the query is somewhere in its text. Each
word counts where it is found first in the order title, question, tags, body
(every section, follow-up and red flag), and the cards are ranked by those
counts in the same order: more words in the title first, then more in the
question, and so on; ties go alphabetically by title.
"""

from collections.abc import Iterable
from functools import lru_cache

from markupsafe import Markup

from app.content.card import Card

# Where a word can be found, best first.
FIELDS = ("title", "question", "tags", "body")


@lru_cache(maxsize=4096)
def _texts(card: Card) -> tuple[str, str, str, str]:
    """The card's title, question, tags and body as casefolded plain text.

    Cached per card: cards are immutable, and a reloaded card is a new object.
    """
    body = [str(section.html) for section in card.sections.values()]
    body += [f"{f.question_text} {f.approach}" for f in card.follow_ups]
    body += [f"{flag.title_text} {flag.explanation}" for flag in card.red_flags]
    return (
        card.title.casefold(),
        card.question_text.casefold(),
        " ".join(card.tags).casefold(),
        Markup(" ".join(body)).striptags().casefold(),
    )


def relevance(card: Card, words: list[str]) -> tuple[int, ...] | None:
    """How many of the (casefolded) words are found first in each field; None if one is missing."""
    texts = _texts(card)
    counts = [0] * len(FIELDS)
    for word in words:
        field = next((n for n, text in enumerate(texts) if word in text), None)
        if field is None:
            return None
        counts[field] += 1
    return tuple(counts)


def search(cards: Iterable[Card], query: str, limit: int = 50) -> list[Card]:
    """The cards that contain every word of ``query``, most relevant first."""
    words = query.casefold().split()
    if not words:
        return []
    scored = [(score, card) for card in cards if (score := relevance(card, words)) is not None]
    scored.sort(key=lambda pair: (tuple(-n for n in pair[0]), pair[1].title.casefold()))
    return [card for _, card in scored[:limit]]

"""History whose card is gone: found, listed, and pruned on request.

A card removed from the content (or a follow-up whose key changed without an
alias) leaves its schedules and totals behind: the queue skips them, but
``/stats`` would keep counting them. :func:`find_orphans` lists them for every
learner; :func:`prune_orphans` deletes the schedules and per-card totals. The
review log and multiple-choice attempts are append-only and stay as they were
written, so a card brought back later finds its log again (``quizlab db
rebuild-schedule`` rebuilds from it).
"""

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, select, tuple_
from sqlalchemy.orm import Session
from sqlmodel import col

from app.content.card import Card, Problem
from app.practice.aliases import key_renames, renames
from app.storage.models import ANSWER, CardActivity, ReviewItem, ReviewLog


@dataclass(frozen=True)
class Orphan:
    """Schedules of one card id (or one follow-up) that the content no longer has."""

    card_id: str
    follow_up: str  # "" for the card itself (its answer and every follow-up)
    items: int  # stored schedules
    reviews: int  # review log entries, kept whatever happens
    renamed_to: str | None = None  # a live card with a similar id: was it renamed?

    def __str__(self) -> str:
        what = f"{self.card_id}/{self.follow_up}" if self.follow_up else self.card_id
        kind = "follow-up" if self.follow_up else "card"
        text = f"{kind} {what}: {self.items} schedule(s), {self.reviews} logged review(s)"
        if self.renamed_to:
            text += (
                f"; if it is now '{self.renamed_to}', add 'aliases: [{self.card_id}]' "
                "to that card to keep this history"
            )
        return text


def _live(cards: Iterable[Card]) -> tuple[set[str], set[tuple[str, str]]]:
    ids: set[str] = set()
    items: set[tuple[str, str]] = set()
    for card in cards:
        ids.add(card.id)
        items.add((card.id, ANSWER))
        items.update((card.id, f.key) for f in card.follow_ups)
    return ids, items


def find_orphans(session: Session, cards: Iterable[Card]) -> list[Orphan]:
    """Every schedule (any learner) whose card or follow-up the content lacks."""
    ids, items = _live(cards)
    counts = session.execute(
        select(col(ReviewItem.card_id), col(ReviewItem.follow_up), func.count()).group_by(
            col(ReviewItem.card_id), col(ReviewItem.follow_up)
        )
    ).all()
    logged = dict(
        session.execute(
            select(col(ReviewLog.card_id), func.count()).group_by(col(ReviewLog.card_id))
        ).all()
    )
    by_card: dict[str, int] = {}
    orphans: list[Orphan] = []
    for card_id, follow_up, count in counts:
        if card_id not in ids:
            by_card[card_id] = by_card.get(card_id, 0) + count
        elif (card_id, follow_up) not in items:
            orphans.append(Orphan(card_id, follow_up, count, 0))
    orphans += [
        Orphan(c, ANSWER, n, logged.get(c, 0), _similar(c, ids)) for c, n in by_card.items()
    ]
    return sorted(orphans, key=lambda o: (o.card_id, o.follow_up))


def _similar(card_id: str, ids: set[str]) -> str | None:
    close = difflib.get_close_matches(card_id, sorted(ids), n=1, cutoff=0.75)
    return close[0] if close else None


def prune_orphans(session: Session, orphans: list[Orphan]) -> int:
    """Delete the orphans' schedules and the gone cards' totals; rows deleted (caller commits)."""
    gone = [o.card_id for o in orphans if not o.follow_up]
    keys = [(o.card_id, o.follow_up) for o in orphans if o.follow_up]
    deleted = 0
    if gone:
        for table in (ReviewItem, CardActivity):
            result = session.execute(delete(table).where(col(table.card_id).in_(gone)))
            deleted += int(result.rowcount)  # type: ignore[attr-defined]
    if keys:
        pair = tuple_(col(ReviewItem.card_id), col(ReviewItem.follow_up))
        result = session.execute(delete(ReviewItem).where(pair.in_(keys)))
        deleted += int(result.rowcount)  # type: ignore[attr-defined]
    return deleted


def orphan_problems(
    orphans: Iterable[Orphan], cards: Iterable[Card], checked: set[str], content: str | None
) -> list[Problem]:
    """Warnings for ``quizlab check``: history that no card or follow-up has now.

    Each is reported on the card that most likely replaced it, if that card is
    among the ``checked`` paths; a card id with no likely heir on ``content``
    (the content folder's shown path, when the whole folder is checked).
    """
    cards = list(cards)
    by_id = {card.id: card for card in cards}
    # History under an alias or a was= key moves when the server next loads the content.
    moving_ids, moving_keys = set(renames(cards)), set(key_renames(cards))
    problems = []
    for orphan in orphans:
        if orphan.card_id in moving_ids or (orphan.card_id, orphan.follow_up) in moving_keys:
            continue
        card = by_id.get(orphan.card_id if orphan.follow_up else orphan.renamed_to or "")
        if orphan.follow_up and card is not None and card.path in checked:
            problems.append(_lost_follow_up(orphan, card))
        elif not orphan.follow_up and card is not None and card.path in checked:
            message = (
                f"card id '{orphan.card_id}' has {_history(orphan)} and no card has it now: "
                f"if this card replaced it, add 'aliases: [{orphan.card_id}]'"
            )
            problems.append(Problem(card.path, card.id_line, message, warning=True))
        elif not orphan.follow_up and card is None and content is not None:
            message = (
                f"card id '{orphan.card_id}' has {_history(orphan)} and no card has it now: "
                f"add 'aliases: [{orphan.card_id}]' to the card that replaced it, or remove "
                "the history with 'quizlab progress orphans --prune'"
            )
            problems.append(Problem(content, 1, message, warning=True))
    return problems


def _history(orphan: Orphan) -> str:
    logged = f" and {orphan.reviews} logged review(s)" if orphan.reviews else ""
    return f"{orphan.items} learner schedule(s){logged}"


def _lost_follow_up(orphan: Orphan, card: Card) -> Problem:
    keys = [f.key for f in card.follow_ups]
    close = difflib.get_close_matches(orphan.follow_up, keys, n=1, cutoff=0.5)
    new = close[0] if close else "new-key"
    message = (
        f"follow-up key '{orphan.follow_up}' has {_history(orphan)} and no follow-up has it "
        f"now: if you renamed it, write {{#{new} was={orphan.follow_up}}}"
    )
    return Problem(card.path, card.sections["Follow-ups"].line, message, warning=True)

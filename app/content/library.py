"""The loaded cards: every deck under the content folder, checked and indexed.

:class:`Library` reads card files, runs the per-file checks of :mod:`app.content.parse`
and the checks that span files (duplicate ids, links to cards that do not
exist), and keeps the last good version of a card whose file is now broken so
the site keeps serving it while the author fixes the edit. Parsed cards are
cached by content hash, so re-scanning an unchanged tree costs a stat and a
read per file, not a parse.

Other parts keep what they compute from the content (the review queue's
index, for one) on the :class:`Snapshot` itself, through
:meth:`Snapshot.derived`: a reload swaps in a new snapshot, so every such
value is rebuilt for the new content and dropped with the old, and no module
holds a global cache keyed by snapshot.
"""

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from app.content.card import Card, ParseResult, Problem, content_hash
from app.content.parse import parse_card

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Deck:
    name: str
    cards: tuple[Card, ...]


@dataclass
class Snapshot:
    """One consistent view of the content, swapped in whole on every reload."""

    cards: dict[str, Card] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)  # by path
    reloading: bool = False  # files are re-read while serving: pages offer a live preview
    _derived: dict[Callable[["Snapshot"], Any], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # Reentrant: a build may derive from another derived value of the same snapshot.
    _derived_lock: threading.RLock = field(
        default_factory=threading.RLock, init=False, repr=False, compare=False
    )

    def derived(self, build: Callable[["Snapshot"], T]) -> T:
        """``build(self)``, computed on first use and kept as long as this snapshot.

        ``build`` is also the key, so each part passes its own class or function
        and gets back the one value it built for this content.
        """
        with self._derived_lock:
            if build not in self._derived:
                self._derived[build] = build(self)
            return cast(T, self._derived[build])

    @property
    def decks(self) -> list[Deck]:
        by_deck: dict[str, list[Card]] = {}
        for card in self.cards.values():
            by_deck.setdefault(card.deck, []).append(card)
        return [
            Deck(name, tuple(sorted(cards, key=lambda c: c.title.casefold())))
            for name, cards in sorted(by_deck.items())
        ]

    def deck(self, name: str) -> Deck | None:
        return next((deck for deck in self.decks if deck.name == name), None)

    def search(self, query: str, limit: int = 50) -> list[Card]:
        words = query.casefold().split()
        hits = [card for card in self.cards.values() if all(w in card.search_text for w in words)]
        return sorted(hits, key=lambda c: (c.deck, c.title.casefold()))[:limit]

    def all_problems(self) -> list[Problem]:
        return sorted(p for problems in self.problems.values() for p in problems)


def card_files(paths: Iterable[Path]) -> list[Path]:
    """Every ``*.md`` card file under the given files and folders, sorted."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p.resolve() for p in path.rglob("*.md") if not p.name.startswith("."))
        elif path.suffix == ".md":
            found.add(path.resolve())
    return sorted(found)


class Library:
    """Cards under one or more roots; :meth:`load` (re)reads them and swaps the snapshot."""

    def __init__(self, *roots: Path, reloading: bool = False) -> None:
        self.roots = roots
        self.reloading = reloading
        self.snapshot = Snapshot()
        self._parsed: dict[str, tuple[str, ParseResult]] = {}  # path -> content hash, result
        self._last_good: dict[str, Card] = {}  # by path
        self._stamps: dict[Path, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def files(self) -> list[Path]:
        return card_files(root for root in self.roots if root.exists())

    def _parse(self, path: Path, shown: str) -> ParseResult:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return ParseResult(None, [Problem(shown, 1, f"cannot read file: {exc}")])
        digest = content_hash(text)
        cached = self._parsed.get(shown)
        if cached is None or cached[0] != digest:
            cached = (digest, _parse_alone(text, shown))
            self._parsed[shown] = cached
        return cached[1]

    def load(self) -> Snapshot:
        """Read every card file and swap in the new snapshot; returns it."""
        with self._lock:
            files = self.files()
            self._stamps = {path: _stamp(path) for path in files}
            cards: dict[str, Card] = {}
            problems: dict[str, list[Problem]] = {}
            shown_paths = []
            written_ids = set()
            for path in files:
                shown = display_path(path)
                shown_paths.append(shown)
                result = self._parse(path, shown)
                card = result.card
                if result.card_id:
                    written_ids.add(result.card_id)
                if card is None:
                    problems[shown] = list(result.problems)
                    # A broken edit keeps the last good version on the site.
                    card = self._last_good.get(shown)
                else:
                    self._last_good[shown] = card
                if card is None:
                    continue
                other = cards.get(card.id)
                if other is not None:
                    problems.setdefault(shown, []).append(
                        Problem(
                            shown,
                            card.id_line,
                            f"duplicate id '{card.id}' (also in {other.path}:{other.id_line})",
                        )
                    )
                    continue
                cards[card.id] = card
            for card in cards.values():
                for link in card.links:
                    if link.card_id not in cards and link.card_id not in written_ids:
                        problems.setdefault(card.path, []).append(
                            Problem(
                                card.path,
                                link.line,
                                f"link to card '{link.card_id}', which does not exist",
                            )
                        )
            # Forget deleted files, so a removed card disappears from the site.
            self._last_good = {k: v for k, v in self._last_good.items() if k in shown_paths}
            self._parsed = {k: v for k, v in self._parsed.items() if k in shown_paths}
            self.snapshot = Snapshot(cards, problems, self.reloading)
        return self.snapshot

    def changed(self) -> bool:
        """Whether any card file was added, removed or modified since the last load."""
        files = self.files()
        if set(files) != set(self._stamps):
            return True
        return any(_stamp(path) != self._stamps[path] for path in files)


def _parse_alone(text: str, shown: str) -> ParseResult:
    """:func:`parse_card`, with any error it did not foresee kept to this one card.

    It returns problems for bad input and should never raise; should a bug make
    it raise anyway, the other cards still load, and this one is a problem to
    report rather than a crash of ``quizlab check``, start-up or a reload.
    """
    try:
        return parse_card(text, shown)
    except Exception as exc:  # a bug, about one file: logged, kept to that file
        logger.exception("parsing %s failed", shown)
        message = (
            f"this card could not be read ({type(exc).__name__}: {exc}); "
            "the other cards are served. Please report it with the file."
        )
        return ParseResult(None, [Problem(shown, 1, message)])


def display_path(path: Path) -> str:
    """A path as printed in messages: relative to the working directory when below it."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return (stat.st_mtime_ns, stat.st_size)


def check_paths(paths: list[Path], content_root: Path) -> list[Problem]:
    """Problems in the given card files or folders.

    Duplicate ids and card links are resolved against ``content_root`` as well,
    so checking one file still catches an id that another deck already uses.
    """
    wanted = {display_path(p) for p in card_files(paths)}
    snapshot = Library(content_root, *paths).load()
    return [p for p in snapshot.all_problems() if p.path in wanted]

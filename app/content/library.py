"""The loaded cards: every deck under the content folder, checked and indexed.

:class:`Library` reads card files, runs the per-file checks of :mod:`app.content.parse`
and the checks that span files (duplicate ids, links to cards that do not
exist), and keeps the last good version of a card whose file is now broken so
the site keeps serving it while the author fixes the edit. Parsed cards are
cached by content hash (in memory, and on disk when given a folder), so
re-scanning an unchanged tree costs a read per file, not a parse, and a
watcher's report of changed files re-reads only those (:meth:`Library.update`).

Other parts keep what they compute from the content (the review queue's
index, for one) on the :class:`Snapshot` itself, through
:meth:`Snapshot.derived`: a reload swaps in a new snapshot, so every such
value is rebuilt for the new content and dropped with the old, and no module
holds a global cache keyed by snapshot.
"""

import difflib
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from app.content.card import Card, ParseResult, Problem, content_hash
from app.content.parse import parse_card
from app.content.parsecache import ParseCache, entry_key
from app.content.rendering import CARD_URL_TEMPLATE, CardUrl, card_urls

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
    warnings: dict[str, list[Problem]] = field(default_factory=dict)  # by path, cards that load
    # Files that never passed the check, by id: previewed while reloading, never listed.
    drafts: dict[str, Card] = field(default_factory=dict)
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

    def all_problems(self) -> list[Problem]:
        return sorted(p for problems in self.problems.values() for p in problems)

    def all_warnings(self) -> list[Problem]:
        return sorted(p for warnings in self.warnings.values() for p in warnings)


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
    """Cards under one or more roots; :meth:`load` (re)reads them and swaps the snapshot.

    :meth:`update` re-reads only the files a watcher reported, then redoes the
    checks that span files; ``cache_dir`` keeps parse results on disk
    (:mod:`app.content.parsecache`) so a restart of unchanged files parses nothing.
    """

    def __init__(
        self,
        *roots: Path,
        reloading: bool = False,
        cache_dir: Path | None = None,
        card_url: CardUrl = CARD_URL_TEMPLATE.format,
    ) -> None:
        self.roots = roots
        self.reloading = reloading
        # Where `card:ID` links point: the web app's own URLs (app.web.app).
        self.card_url = card_url
        # Cached parse results hold the links they were rendered with.
        self._salt = card_url("ID")
        self.snapshot = Snapshot()
        self._disk = ParseCache(cache_dir) if cache_dir is not None else None
        # By resolved path: (shown path, disk key or content hash, result).
        self._parsed: dict[Path, tuple[str, str, ParseResult]] = {}
        self._last_good: dict[str, Card] = {}  # by shown path
        self._stamps: dict[Path, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def files(self) -> list[Path]:
        return card_files(root for root in self.roots if root.exists())

    def _read(self, path: Path) -> None:
        """Parse one file into ``_parsed`` unless its text is what was parsed last."""
        self._stamps[path] = _stamp(path)
        old = self._parsed.get(path)
        shown = old[0] if old is not None else display_path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem = Problem(shown, 1, f"cannot read file: {exc}")
            self._parsed[path] = (shown, "", ParseResult(None, [problem]))
            return
        key = entry_key(shown, text, self._salt) if self._disk is not None else content_hash(text)
        if old is not None and old[1] == key:
            return
        result = self._disk.get(key) if self._disk is not None else None
        if result is None:
            with card_urls(self.card_url):
                result = _parse_alone(text, shown)
            if self._disk is not None:
                self._disk.put(key, result)
        self._parsed[path] = (shown, key, result)

    def load(self) -> Snapshot:
        """Read every card file and swap in the new snapshot; returns it."""
        with self._lock:
            files = self.files()
            wanted = set(files)
            for gone in [path for path in self._parsed if path not in wanted]:
                self._forget(gone)
            for path in files:
                self._read(path)
            if self._disk is not None:
                self._disk.keep_only({entry[1] for entry in self._parsed.values()})
            return self._assemble()

    def update(self, paths: Iterable[Path]) -> Snapshot:
        """Re-read only ``paths`` (card files added, edited or removed) and swap the snapshot.

        Anything else (a folder renamed or removed, a path outside the roots)
        is handled by a full :meth:`load`, which still parses only what changed.
        """
        roots = [root.resolve() for root in self.roots]
        with self._lock:
            for path in paths:
                path = path.resolve()
                if path.suffix != ".md" or path.is_dir() or path.name.startswith("."):
                    break
                if not any(path.is_relative_to(root) for root in roots):
                    break
                if path.is_file():
                    self._read(path)
                else:
                    self._forget(path)
            else:
                return self._assemble()
        return self.load()

    def _forget(self, path: Path) -> None:
        entry = self._parsed.pop(path, None)
        self._stamps.pop(path, None)
        if entry is not None:
            self._last_good.pop(entry[0], None)  # a removed card disappears from the site

    def _assemble(self) -> Snapshot:
        """The snapshot of what ``_parsed`` holds: last good versions, cross-file checks."""
        cards: dict[str, Card] = {}
        problems: dict[str, list[Problem]] = {}
        warnings: dict[str, list[Problem]] = {}
        drafts: dict[str, Card] = {}
        written_ids = set()
        for path in sorted(self._parsed):
            shown, _, result = self._parsed[path]
            card = result.card
            if result.card_id:
                written_ids.add(result.card_id)
            if card is None:
                problems[shown] = list(result.problems)
                # A broken edit keeps the last good version on the site.
                card = self._last_good.get(shown)
                if card is None and result.draft is not None:
                    drafts.setdefault(result.draft.id, result.draft)
            else:
                self._last_good[shown] = card
                if result.warnings:
                    warnings[shown] = list(result.warnings)
            if card is None:
                continue
            other = cards.get(card.id)
            if other is not None:
                _duplicate(card, other, problems)
                continue
            cards[card.id] = card
        _check_across(cards, written_ids, problems)
        drafts = {k: v for k, v in drafts.items() if k not in cards}
        self.snapshot = Snapshot(cards, problems, warnings, drafts, self.reloading)
        return self.snapshot

    def changed(self) -> bool:
        """Whether any card file was added, removed or modified since the last load."""
        files = self.files()
        if set(files) != set(self._stamps):
            return True
        return any(_stamp(path) != self._stamps[path] for path in files)


def _check_across(
    cards: dict[str, Card], written_ids: set[str], problems: dict[str, list[Problem]]
) -> None:
    """Links to cards that do not exist, and aliases that are still an id or claimed twice."""
    claims: dict[str, list[Card]] = {}
    for card in cards.values():
        for alias in card.aliases:
            claims.setdefault(alias, []).append(card)
    for card in cards.values():
        found = [
            Problem(card.path, link.line, _missing_link(link.card_id, cards))
            for link in card.links
            if link.card_id not in cards and link.card_id not in written_ids
        ]
        found += [
            Problem(
                card.path,
                card.id_line,
                f"alias '{alias}' is the id of {cards[alias].path}: "
                "an alias is an id no card has any more",
            )
            for alias in card.aliases
            if alias in cards
        ]
        found += [
            Problem(
                card.path,
                card.id_line,
                f"alias '{alias}' is also listed by "
                f"{', '.join(other.path for other in claims[alias] if other is not card)}: "
                "its history can move to one card only",
            )
            for alias in card.aliases
            if alias not in cards and len(claims[alias]) > 1
        ]
        if found:
            problems.setdefault(card.path, []).extend(found)


def _missing_link(card_id: str, cards: dict[str, Card]) -> str:
    close = difflib.get_close_matches(card_id, sorted(cards), n=1, cutoff=0.6)
    hint = f": did you mean 'card:{close[0]}'?" if close else ""
    return f"link to card '{card_id}', which does not exist{hint}"


def _duplicate(card: Card, other: Card, problems: dict[str, list[Problem]]) -> None:
    """Report a second file with a taken id, in both files.

    The page at the id serves the first file, so it says so too: an author
    editing the second file would otherwise see the other card, unexplained.
    """
    message = f"duplicate id '{card.id}' (also in {other.path}:{other.id_line})"
    problems.setdefault(card.path, []).append(Problem(card.path, card.id_line, message))
    message = (
        f"duplicate id '{card.id}' (also in {card.path}:{card.id_line}): this page shows this file"
    )
    problems.setdefault(other.path, []).append(Problem(other.path, other.id_line, message))


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


def check_paths(paths: list[Path], content_root: Path, *, warnings: bool = False) -> list[Problem]:
    """Problems in the given card files or folders, with the warnings when asked.

    Duplicate ids and card links are resolved against ``content_root`` as well,
    so checking one file still catches an id that another deck already uses.
    """
    return problems_in(Library(content_root, *paths).load(), paths, warnings=warnings)


def problems_in(snapshot: Snapshot, paths: list[Path], *, warnings: bool = False) -> list[Problem]:
    """The snapshot's problems (and warnings, when asked) in the given files or folders."""
    wanted = {display_path(p) for p in card_files(paths)}
    found = snapshot.all_problems() + (snapshot.all_warnings() if warnings else [])
    return sorted(p for p in found if p.path in wanted)

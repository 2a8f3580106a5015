"""One card: the file format's fixed names and the parsed model.

A card file is YAML front matter followed by ``##`` sections with fixed names
(:data:`SECTIONS`). Follow-ups and red flags are ``###`` entries with a stable
``{#key}``. This module holds only the data: :func:`app.content.parse.parse_card`
reads a file into a :class:`Card` and a list of :class:`Problem`, with the
checks split by part of the file (:mod:`~app.content.frontmatter`,
:mod:`~app.content.sections`, :mod:`~app.content.entries`,
:mod:`~app.content.choices`). Checks that span files (duplicate ids, links to
missing cards) live in :mod:`app.content.library`.
"""

import hashlib
import random
import re
from dataclasses import dataclass, field

from markupsafe import Markup

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.rendering import Rich

SECTIONS = (
    "Answer",
    "TL;DR",
    "Key points",
    "Analogy",
    "Deep dive",
    "When it doesn't apply",
    "Quick scan",
    "Side by side",
    "Real-world examples",
    "Follow-ups",
    "Red flags",
    "Multiple choice",
)
REQUIRED_SECTIONS = ("Answer", "TL;DR", "Key points", "Follow-ups", "Red flags")
# The sections shown by the 2-4 minute "quick scan" view.
QUICK_SCAN_SECTIONS = ("Answer", "TL;DR", "Key points", "Quick scan", "Red flags")
# Key points: what an interviewer listens for, a few short bullets
# (app.content.keypoints checks them; a mock interview ticks them off).
KEY_POINTS_MIN = 3
KEY_POINTS_MAX = 6
KEY_POINT_LENGTH = 120  # characters as written: a phrase to listen for, not a paragraph
DIFFICULTIES = ("easy", "medium", "hard")
REQUIRED_FIELDS = ("id", "title", "question", "deck", "difficulty", "minutes")
OPTIONAL_FIELDS = ("tags", "sources", "aliases")
# Text that `quizlab new` writes and the check refuses until it is replaced.
PLACEHOLDER = "TODO"

# Card ids and entry keys: permanent, since progress is keyed on them.
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


@dataclass(frozen=True, order=True)
class Problem:
    """Something to fix in a card file, printed as ``path:line: message``.

    A warning (a card below the deck standard, a formula too wide for a phone)
    does not stop the card from loading; ``quizlab check --strict`` fails on it.
    """

    path: str
    line: int
    message: str
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning: " if self.warning else ""
        return f"{self.path}:{self.line}: {kind}{self.message}"


@dataclass(frozen=True)
class Section:
    name: str
    slug: str
    html: Rich
    line: int


@dataclass(frozen=True)
class KeyPoint:
    """One bullet of ``## Key points``: rendered, as plain text, and where it was written."""

    html: Markup
    text: str
    line: int


@dataclass(frozen=True)
class FollowUp:
    key: str
    question: Markup
    question_text: str
    approach: Rich
    line: int
    # Former keys (``{#key was=old}``): schedules under them move to ``key``.
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RedFlag:
    key: str
    title: Markup
    title_text: str
    explanation: Rich
    line: int


@dataclass(frozen=True)
class Choice:
    key: str  # "a", "b", ... in the order written
    html: Markup
    text: str
    correct: bool
    flag: str | None
    line: int
    # Why the correct option is right (the paragraphs under it); a wrong
    # option's explanation is its red flag.
    explanation: Rich | None = None


@dataclass(frozen=True)
class MultipleChoice:
    prompt: Rich
    choices: tuple[Choice, ...]

    @property
    def correct(self) -> Choice:
        return next(choice for choice in self.choices if choice.correct)

    def choice(self, key: str) -> Choice | None:
        return next((choice for choice in self.choices if choice.key == key), None)

    def shuffled(self, seed: str) -> tuple[Choice, ...]:
        """The options in an order fixed by ``seed`` (a learner and an attempt).

        The same seed gives the same order, so a reload shows what it showed;
        the keys stay the written letters, so an answer means the same option.
        """
        order = list(self.choices)
        random.Random(hashlib.sha256(seed.encode()).digest()).shuffle(order)
        return tuple(order)


@dataclass(frozen=True)
class CardLink:
    card_id: str
    line: int


# eq=False: a card is hashed by identity (cheaply, for caches); a reloaded file
# gives a new Card object.
@dataclass(frozen=True, eq=False)
class Card:
    id: str
    title: str
    question: Markup
    question_text: str
    deck: str
    tags: tuple[str, ...]
    difficulty: str
    minutes: int
    sources: tuple[Markup, ...]
    path: str
    content_hash: str
    sections: dict[str, Section]
    follow_ups: tuple[FollowUp, ...]
    red_flags: tuple[RedFlag, ...]
    multiple_choice: MultipleChoice | None
    notes: Rich  # rendered footnotes, shown after the sections
    key_points: tuple[KeyPoint, ...] = field(default=())
    links: tuple[CardLink, ...] = field(default=())
    bindings: tuple[LiveBinding, ...] = field(default=())
    demos: tuple[EmbeddedDemo, ...] = field(default=())
    id_line: int = 1
    # Former ids: history recorded under them is moved to ``id`` (app.practice.aliases).
    aliases: tuple[str, ...] = ()
    # A file that has never passed the check, built from what did parse, so an
    # author can preview it (only while content reloading is on).
    draft: bool = False

    def red_flag(self, key: str) -> RedFlag | None:
        return next((flag for flag in self.red_flags if flag.key == key), None)

    @property
    def search_text(self) -> str:
        return " ".join((self.title, self.question_text, *self.tags)).casefold()


@dataclass
class ParseResult:
    card: Card | None
    problems: list[Problem]  # errors (then card is None, and warnings are listed too)
    # The id from the front matter even when the card has problems, so links
    # to a card that is being fixed are not reported as links to nothing.
    card_id: str | None = None
    warnings: list[Problem] = field(default_factory=list)  # of a card that loads
    draft: Card | None = None  # when card is None: what parsed, for the preview


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

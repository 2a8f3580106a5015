"""A card's body: one pass over its tokens, then the split into ``##`` sections.

:func:`walk` checks formulas, numbers the ``{live}`` bindings and embedded
demos, and collects links to other cards. :func:`split_sections` cuts the
token stream at ``##`` headings (and, in Follow-ups and Red flags, at ``###``
entries); :func:`check_sections` checks the section names;
:func:`render_sections` renders them once the card is known to be usable.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token

from app.content.binding import (
    EmbeddedDemo,
    LiveBinding,
    binding_problem,
    embedded_problem,
    is_demo_fence,
    parse_binding,
    parse_embedded,
)
from app.content.card import REQUIRED_SECTIONS, SECTIONS, CardLink, Problem, Section, slugify
from app.content.formula import PHONE_WIDTH, FormulaError, rendered_width, to_mathml
from app.content.mistakes import suggest_section
from app.content.rendering import CARD_LINK_SCHEME, render_tokens

# The sections whose ``###`` headings start entries with a ``{#key}``.
ENTRY_SECTIONS = ("Follow-ups", "Red flags")
_KEY_SUFFIX = re.compile(r"\s*\{#([^}]*)\}\s*$")


@dataclass
class Entry:
    """A ``###`` entry inside Follow-ups or Red flags."""

    title: str
    key: str | None
    line: int
    tokens: list[Token]


@dataclass
class RawSection:
    """A ``##`` section's tokens before rendering; entries only in ENTRY_SECTIONS."""

    name: str
    line: int
    tokens: list[Token]
    entries: list[Entry]


@dataclass
class Body:
    sections: list[RawSection]
    notes: list[Token]  # the footnotes, rendered after the sections


@dataclass
class Found:
    """What one pass over the tokens finds: links, live numbers, embedded demos."""

    links: list[CardLink] = field(default_factory=list)
    bindings: list[LiveBinding] = field(default_factory=list)
    demos: list[EmbeddedDemo] = field(default_factory=list)

    @property
    def slots(self) -> list[LiveBinding | EmbeddedDemo]:
        return [*self.bindings, *self.demos]


def line_of(token: Token, offset: int) -> int:
    """The file's line (from 1) of a token parsed from a body starting at line index offset."""
    return offset + (token.map[0] if token.map else 0) + 1


def has_text(tokens: list[Token]) -> bool:
    return any(t.content.strip() for t in tokens if t.type not in ("heading_open", "heading_close"))


def walk(tokens: list[Token], offset: int, path: str, problems: list[Problem]) -> Found:
    """Check formulas, number live bindings and demos, collect card links.

    Line numbers come from the enclosing block token. Each live number and demo
    gets an index in ``meta`` that the renderer turns into a slot.
    """
    found = Found()
    line = offset
    for token in tokens:
        if token.map:
            line = line_of(token, offset)
        _walk_block(token, line, found, path, problems)
        for child, child_line in _child_lines(token, line):
            _walk_inline(child, child_line, found, path, problems)
    return found


def _child_lines(token: Token, line: int) -> Iterator[tuple[Token, int]]:
    """Each inline child with its own line, found by its text in the paragraph."""
    at = 0
    for child in token.children or ():
        where = token.content.find(child.content, at) if child.content else -1
        if where < 0:
            yield child, line + token.content.count("\n", 0, at)
        else:
            yield child, line + token.content.count("\n", 0, where)
            at = where + len(child.content)


def _walk_block(token: Token, line: int, found: Found, path: str, problems: list[Problem]) -> None:
    if token.type == "math_block":
        _check_formula(token.content, True, path, line, problems)
    if token.type == "fence" and is_demo_fence(token.info):
        demo = parse_embedded(token.info, token.content, len(found.demos), line)
        token.meta["index"] = demo.index
        found.demos.append(demo)
        error = demo.error or embedded_problem(demo)
        if error:
            problems.append(Problem(path, line, error))


def _walk_inline(child: Token, line: int, found: Found, path: str, problems: list[Problem]) -> None:
    if child.type in ("math_inline", "math_inline_double"):
        _check_formula(child.content, False, path, line, problems)
    elif child.type == "live_number":
        binding = parse_binding(child.content, len(found.bindings), line)
        child.meta["index"] = binding.index
        found.bindings.append(binding)
        error = binding.error or binding_problem(binding)
        if error:
            problems.append(Problem(path, line, error))
    elif child.type == "link_open":
        href = str(child.attrGet("href") or "")
        if href.startswith(CARD_LINK_SCHEME):
            found.links.append(CardLink(href.removeprefix(CARD_LINK_SCHEME), line))


def _check_formula(
    latex: str, display: bool, path: str, line: int, problems: list[Problem]
) -> None:
    try:
        mathml = to_mathml(latex, display=display)
    except FormulaError as exc:
        problems.append(Problem(path, line, str(exc)))
        return
    width = rendered_width(mathml)
    if not display and width > PHONE_WIDTH:
        message = (
            f"inline formula '{latex.strip()}' is about {width:.0f} characters wide, more than "
            f"a phone's line ({PHONE_WIDTH}): make it display math, '$$' on lines of its own"
        )
        problems.append(Problem(path, line, message, warning=True))


def split_sections(tokens: list[Token], offset: int, path: str, problems: list[Problem]) -> Body:
    """Split the token stream at ``##`` and ``###`` headings; footnotes come last."""
    splitter = _Splitter(offset, path, problems)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "footnote_block_open":
            return splitter.finish(tokens[i:])
        if token.type == "heading_open" and token.tag in ("h1", "h2", "h3"):
            # A heading is always three tokens: open, its inline text, close.
            splitter.heading(tokens[i : i + 3])
            i += 3
        else:
            splitter.add(token)
            i += 1
    return splitter.finish([])


class _Splitter:
    """The state of the split: the open section, and the first text before any section."""

    def __init__(self, offset: int, path: str, problems: list[Problem]) -> None:
        self.offset = offset
        self.path = path
        self.problems = problems
        self.sections: list[RawSection] = []
        self.current: RawSection | None = None
        self.preamble_line: int | None = None

    def heading(self, tokens: list[Token]) -> None:
        title = tokens[1].content.strip()
        line = line_of(tokens[0], self.offset)
        tag = tokens[0].tag
        if tag == "h1":
            message = "use '## Section' headings: the title comes from the front matter"
            self.problems.append(Problem(self.path, line, message))
        elif tag == "h2":
            self.current = RawSection(title, line, [], [])
            self.sections.append(self.current)
        elif self.current is None:
            message = f"'### {title}' must be inside a '##' section"
            self.problems.append(Problem(self.path, line, message))
        elif self.current.name in ENTRY_SECTIONS:
            key_match = _KEY_SUFFIX.search(title)
            key = key_match.group(1).strip() if key_match else None
            clean = _KEY_SUFFIX.sub("", title) if key_match else title
            self.current.entries.append(Entry(clean, key, line, []))
        else:
            self.current.tokens.extend(tokens)

    def add(self, token: Token) -> None:
        if self.current is None:
            if self.preamble_line is None and token.map and _has_content(token):
                self.preamble_line = line_of(token, self.offset)
        elif self.current.entries:
            self.current.entries[-1].tokens.append(token)
        else:
            self.current.tokens.append(token)

    def finish(self, notes: list[Token]) -> Body:
        if self.preamble_line is not None:
            message = "text before the first '## Section' heading: move it into a section"
            self.problems.append(Problem(self.path, self.preamble_line, message))
        return Body(self.sections, notes)


def _has_content(token: Token) -> bool:
    # An empty code block still shows, so it counts as text before the sections.
    return bool(token.content.strip()) or token.type == "fence"


def check_sections(
    sections: list[RawSection], offset: int, path: str, problems: list[Problem]
) -> dict[str, RawSection]:
    """Check names, repeats, empty and missing sections; return the known ones by name."""
    seen: dict[str, int] = {}
    suggested: set[str] = set()
    for section in sections:
        message = _section_problem(section, seen, suggested)
        if message:
            problems.append(Problem(path, section.line, message))
    for name in REQUIRED_SECTIONS:
        # A misspelt heading already says which name it should have.
        if name not in seen and name not in suggested:
            problems.append(Problem(path, offset + 1, f"missing required section '## {name}'"))
    return {s.name: s for s in sections if s.name in SECTIONS}


def _section_problem(section: RawSection, seen: dict[str, int], suggested: set[str]) -> str | None:
    """What is wrong with one section; records its name in ``seen`` the first time."""
    if section.name not in SECTIONS:
        return _unknown_section(section.name, suggested)
    if section.name in seen:
        return f"section '{section.name}' appears twice (first on line {seen[section.name]})"
    seen[section.name] = section.line
    if section.entries or has_text(section.tokens):
        return None
    return f"section '{section.name}' is empty"


def _unknown_section(name: str, suggested: set[str]) -> str:
    """The message for an unknown name; the name it most likely means goes into ``suggested``."""
    hint = suggest_section(name)
    if hint is None:
        return f"unknown section '{name}': expected one of: {', '.join(SECTIONS)}"
    suggested.add(hint)
    return f"unknown section '{name}': did you mean '{hint}'?"


def render_sections(
    by_name: dict[str, RawSection],
    env: dict[str, Any],
    slots: list[LiveBinding | EmbeddedDemo],
) -> dict[str, Section]:
    """Render every section but the multiple choice, which is shown on its own."""
    rendered = {
        name: Section(
            name,
            slugify(name),
            render_tokens(section.tokens, env, heading_shift=1, slots=slots),
            section.line,
        )
        for name, section in by_name.items()
        if name not in (*ENTRY_SECTIONS, "Multiple choice")
    }
    for name in ENTRY_SECTIONS:
        # Text before the first ### is an introduction, shown above the entries.
        section = by_name.get(name)
        if section is None:  # only in a draft
            continue
        rendered[name] = Section(
            name, slugify(name), render_tokens(section.tokens, env, slots=slots), section.line
        )
    return rendered

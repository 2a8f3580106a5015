"""Parse one card file: each part is checked by its own module, the card built here.

:func:`parse_card` never raises on bad input: it returns the card (when the
file is usable) and a list of :class:`~app.content.card.Problem`, each with the
line to fix, in the order the checks run: front matter, the token walk
(formulas, live numbers, demos), placeholders, headings, sections, entries,
the multiple choice.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from markdown_it.token import Token
from markupsafe import Markup

from app.content.card import PLACEHOLDER, Card, MultipleChoice, ParseResult, Problem, content_hash
from app.content.choices import check_multiple_choice
from app.content.entries import (
    KeyedEntry,
    check_entries,
    render_follow_ups,
    render_red_flags,
    written_keys,
)
from app.content.formula import FormulaError, to_mathml
from app.content.frontmatter import FrontMatter, check_fields, split_front_matter
from app.content.rendering import MARKDOWN, plain_text, render_inline, render_tokens
from app.content.sections import (
    Found,
    RawSection,
    check_sections,
    render_sections,
    split_sections,
    walk,
)

_PLACEHOLDER = re.compile(rf"\b{PLACEHOLDER}\b")


@dataclass
class _Body:
    """The checked body, kept for rendering once the whole file is known to be usable."""

    env: dict[str, Any]  # markdown-it's environment: footnotes, shared by every render
    found: Found
    sections: dict[str, RawSection]
    notes: list[Token]
    follow_ups: list[KeyedEntry]
    red_flags: list[KeyedEntry]
    multiple_choice: MultipleChoice | None


def parse_card(text: str, path: str) -> ParseResult:
    """Parse one card file; ``path`` is only used in messages and for the deck check."""
    problems: list[Problem] = []
    front = split_front_matter(text, path, problems)
    if front is None:
        return ParseResult(None, problems)
    fields = check_fields(front, problems)
    if fields is not None:
        problems.extend(_formula_problems(front, fields))
    body = _parse_body(text, front.body_start, path, problems)
    if fields is None or problems:
        return ParseResult(None, problems, front.written_id)
    card = _card(text, front, fields, body)
    return ParseResult(card, [], card.id)


def _parse_body(text: str, body_start: int, path: str, problems: list[Problem]) -> _Body:
    env: dict[str, Any] = {}
    tokens = MARKDOWN.parse("\n".join(text.splitlines()[body_start:]), env)
    found = walk(tokens, body_start, path, problems)
    problems.extend(_placeholders(text, path))
    split = split_sections(tokens, body_start, path, problems)
    by_name = check_sections(split.sections, body_start, path, problems)
    follow_ups = check_entries(by_name.get("Follow-ups"), "follow-up", path, problems)
    red_flags = check_entries(by_name.get("Red flags"), "red flag", path, problems)
    multiple_choice = check_multiple_choice(
        by_name.get("Multiple choice"),
        written_keys(by_name.get("Red flags")),
        body_start,
        path,
        problems,
        env,
        found.slots,
    )
    return _Body(env, found, by_name, split.notes, follow_ups, red_flags, multiple_choice)


def _formula_problems(front: FrontMatter, fields: dict[str, Any]) -> Iterator[Problem]:
    """Formulas in the title and question, checked as the body's are (walk, in sections)."""
    for name in ("title", "question"):
        for token in MARKDOWN.parseInline(fields[name]):
            for child in token.children or []:
                if child.type in ("math_inline", "math_inline_double"):
                    try:
                        to_mathml(child.content, display=child.type == "math_inline_double")
                    except FormulaError as exc:
                        yield Problem(front.path, front.line_of(name), str(exc))


def _placeholders(text: str, path: str) -> Iterator[Problem]:
    lines = sorted({text.count("\n", 0, m.start()) + 1 for m in _PLACEHOLDER.finditer(text)})
    for line in lines:
        yield Problem(path, line, f"placeholder '{PLACEHOLDER}' left in the card: replace it")


def _card(text: str, front: FrontMatter, fields: dict[str, Any], body: _Body) -> Card:
    env, slots = body.env, body.found.slots
    sections = render_sections(body.sections, env, slots)
    return Card(
        id=fields["id"],
        title=fields["title"],
        question=Markup(render_inline(fields["question"])),
        question_text=plain_text(fields["question"]),
        deck=fields["deck"],
        tags=fields["tags"],
        difficulty=fields["difficulty"],
        minutes=fields["minutes"],
        sources=tuple(Markup(render_inline(source)) for source in fields["sources"]),
        path=front.path,
        content_hash=content_hash(text),
        sections=sections,
        follow_ups=render_follow_ups(body.follow_ups, env, slots),
        red_flags=render_red_flags(body.red_flags, env, slots),
        multiple_choice=body.multiple_choice,
        notes=render_tokens(body.notes, env, slots=slots),
        links=tuple(body.found.links),
        bindings=tuple(body.found.bindings),
        demos=tuple(body.found.demos),
        id_line=front.line_of("id"),
    )

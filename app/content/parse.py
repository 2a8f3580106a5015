"""Parse one card file: each part is checked by its own module, the card built here.

:func:`parse_card` never raises on bad input: it returns the card (when the
file is usable) and a list of :class:`~app.content.card.Problem`, each with the
line to fix, in the order the checks run: front matter, the token walk
(formulas, live numbers, demos), placeholders, headings, sections, key points,
entries, the multiple choice.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from markdown_it.token import Token
from markupsafe import Markup

from app.content.binding import embedded_problem
from app.content.card import (
    DIFFICULTIES,
    ID_PATTERN,
    PLACEHOLDER,
    Card,
    KeyPoint,
    MultipleChoice,
    ParseResult,
    Problem,
    content_hash,
)
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
from app.content.keypoints import check_key_points
from app.content.mistakes import fence_left_open, find_mistakes
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
    key_points: tuple[KeyPoint, ...]
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
    if fields is None or any(not p.warning for p in problems):
        return ParseResult(None, problems, front.written_id, draft=_draft(text, front, body))
    card = _card(text, front, fields, body)
    problems.extend(_below_standard(card, front))
    return ParseResult(card, [], card.id, warnings=problems)


def _draft(text: str, front: FrontMatter, body: _Body) -> Card | None:
    """A preview of a file with problems, from what parsed; None without a usable id."""
    data = front.data
    card_id = front.written_id
    if card_id is None or not ID_PATTERN.match(card_id):
        return None

    def text_of(name: str, default: str) -> str:
        value = data.get(name)
        return value.strip() if isinstance(value, str) and value.strip() else default

    minutes = data.get("minutes")
    listed = {
        name: tuple(x for x in data.get(name) or () if isinstance(x, str))
        if isinstance(data.get(name), list)
        else ()
        for name in ("tags", "sources")
    }
    fields = {
        "id": card_id,
        "title": text_of("title", card_id),
        "question": text_of("question", text_of("title", card_id)),
        "deck": Path(front.path).parent.name,
        "tags": listed["tags"],
        "difficulty": data.get("difficulty")
        if data.get("difficulty") in DIFFICULTIES
        else "medium",
        "minutes": minutes if isinstance(minutes, int) and 1 <= minutes <= 120 else 1,
        "sources": listed["sources"],
    }
    # Broken demos cannot be drawn: leave them out (their problems are listed).
    good_demos = [d for d in body.found.demos if d.error is None and not embedded_problem(d)]
    found = Found(body.found.links, body.found.bindings, good_demos)
    draft_body = replace(body, found=found, multiple_choice=None)
    card = _card(text, front, fields, draft_body)
    return replace(card, draft=True, bindings=(), demos=tuple(good_demos))


def _below_standard(card: Card, front: FrontMatter) -> Iterator[Problem]:
    """Warnings for a card that works but falls short of the deck standard."""
    if not card.sources:
        message = "no sources: add 'sources:' with where each claim comes from"
        yield Problem(
            card.path, front.field_lines.get("sources", front.body_start), message, warning=True
        )
    for entries, name, least in (
        (card.follow_ups, "Follow-ups", 2),
        (card.red_flags, "Red flags", 3),
    ):
        if len(entries) < least:
            line = card.sections[name].line
            message = f"only {len(entries)} in '## {name}': the deck standard is {least} or more"
            yield Problem(card.path, line, message, warning=True)


def _parse_body(text: str, body_start: int, path: str, problems: list[Problem]) -> _Body:
    env: dict[str, Any] = {}
    lines = text.splitlines()[body_start:]
    tokens = MARKDOWN.parse("\n".join(lines), env)
    found = walk(tokens, body_start, path, problems)
    problems.extend(find_mistakes(tokens, lines, body_start, path))
    problems.extend(_placeholders(text, path))
    split = split_sections(tokens, body_start, path, problems)
    before = len(problems)
    by_name = check_sections(split.sections, body_start, path, problems)
    if fence_left_open(problems):
        # The sections after an unclosed fence are inside it: say that, not "missing".
        problems[before:] = [p for p in problems[before:] if "missing required" not in p.message]
    key_points = check_key_points(by_name.get("Key points"), body_start, path, problems)
    follow_ups = check_entries(by_name.get("Follow-ups"), "follow-up", path, problems, body_start)
    red_flags = check_entries(by_name.get("Red flags"), "red flag", path, problems, body_start)
    multiple_choice = check_multiple_choice(
        by_name.get("Multiple choice"),
        written_keys(by_name.get("Red flags")),
        body_start,
        path,
        problems,
        env,
        found.slots,
    )
    return _Body(
        env, found, by_name, split.notes, key_points, follow_ups, red_flags, multiple_choice
    )


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
        key_points=body.key_points,
        links=tuple(body.found.links),
        bindings=tuple(body.found.bindings),
        demos=tuple(body.found.demos),
        id_line=front.line_of("id"),
        aliases=fields.get("aliases", ()),
    )

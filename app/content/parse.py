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

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.card import (
    ID_PATTERN,
    PLACEHOLDER,
    Card,
    Choice,
    FollowUp,
    MultipleChoice,
    ParseResult,
    Problem,
    RedFlag,
    content_hash,
    slugify,
)
from app.content.frontmatter import FrontMatter, check_fields, split_front_matter
from app.content.rendering import MARKDOWN, plain_text, render_inline, render_tokens
from app.content.sections import (
    Found,
    RawSection,
    check_sections,
    has_text,
    line_of,
    render_sections,
    split_sections,
    walk,
)

_PLACEHOLDER = re.compile(rf"\b{PLACEHOLDER}\b")
_OPTION = re.compile(r"^\[(?P<mark>[ xX])\]\s+(?P<text>.*?)(?:\s*\{flag=(?P<flag>[^}]*)\})?\s*$")


@dataclass
class _Body:
    """The checked body, kept for rendering once the whole file is known to be usable."""

    env: dict[str, Any]  # markdown-it's environment: footnotes, shared by every render
    found: Found
    sections: dict[str, RawSection]
    notes: list[Token]
    follow_ups: list[tuple[str, str, list[Token], int]]
    red_flags: list[tuple[str, str, list[Token], int]]
    multiple_choice: MultipleChoice | None


def parse_card(text: str, path: str) -> ParseResult:
    """Parse one card file; ``path`` is only used in messages and for the deck check."""
    problems: list[Problem] = []
    front = split_front_matter(text, path, problems)
    if front is None:
        return ParseResult(None, problems)
    fields = check_fields(front, problems)
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
    follow_ups = _entries(by_name.get("Follow-ups"), "follow-up", path, problems)
    red_flags = _entries(by_name.get("Red flags"), "red flag", path, problems)
    # Every key written counts, so a red flag missing its body is reported once.
    flag_keys = (
        {e.key for e in by_name["Red flags"].entries if e.key} if "Red flags" in by_name else set()
    )
    multiple_choice = _multiple_choice(
        by_name.get("Multiple choice"), flag_keys, path, problems, body_start, env, found.slots
    )
    return _Body(env, found, by_name, split.notes, follow_ups, red_flags, multiple_choice)


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
        follow_ups=tuple(
            FollowUp(
                key,
                Markup(render_inline(title)),
                plain_text(title),
                render_tokens(tokens, env, slots=slots),
                line,
            )
            for key, title, tokens, line in body.follow_ups
        ),
        red_flags=tuple(
            RedFlag(
                key,
                Markup(render_inline(title)),
                plain_text(title),
                render_tokens(tokens, env, slots=slots),
                line,
            )
            for key, title, tokens, line in body.red_flags
        ),
        multiple_choice=body.multiple_choice,
        notes=render_tokens(body.notes, env, slots=slots),
        links=tuple(body.found.links),
        bindings=tuple(body.found.bindings),
        demos=tuple(body.found.demos),
        id_line=front.line_of("id"),
    )


def _entries(
    section: RawSection | None, kind: str, path: str, problems: list[Problem]
) -> list[tuple[str, str, list[Token], int]]:
    if section is None:
        return []
    if not section.entries:
        problems.append(
            Problem(
                path, section.line, f"'{section.name}' needs at least one '### ' {kind} with a body"
            )
        )
        return []
    result = []
    keys: dict[str, int] = {}
    for entry in section.entries:
        if entry.key is None:
            problems.append(
                Problem(
                    path,
                    entry.line,
                    f"{kind} '{entry.title}' needs a stable key: end the heading with "
                    f"{{#{slugify(entry.title)[:40].strip('-')}}}",
                )
            )
            continue
        if not ID_PATTERN.match(entry.key):
            problems.append(
                Problem(
                    path,
                    entry.line,
                    f"{kind} key '{entry.key}' must be lowercase letters, digits and '-'",
                )
            )
            continue
        if entry.key in keys:
            problems.append(
                Problem(
                    path,
                    entry.line,
                    f"{kind} key '{entry.key}' is used twice (first on line {keys[entry.key]})",
                )
            )
            continue
        keys[entry.key] = entry.line
        if not has_text(entry.tokens):
            what = (
                "its approach" if kind == "follow-up" else "why it is wrong and what to say instead"
            )
            problems.append(
                Problem(path, entry.line, f"{kind} '{entry.title}' has no body: write {what}")
            )
            continue
        result.append((entry.key, entry.title, entry.tokens, entry.line))
    return result


def _multiple_choice(
    section: RawSection | None,
    flag_keys: set[str],
    path: str,
    problems: list[Problem],
    offset: int,
    env: dict[str, Any],
    slots: list[LiveBinding | EmbeddedDemo],
) -> MultipleChoice | None:
    if section is None:
        return None
    prompt_tokens: list[Token] = []
    choices: list[Choice] = []
    depth = 0
    in_list = False
    before = len(problems)
    for token in section.tokens:
        if token.type == "bullet_list_open":
            depth += 1
            in_list = True
            continue
        if token.type == "bullet_list_close":
            depth -= 1
            continue
        if not in_list:
            prompt_tokens.append(token)
            continue
        if depth == 1 and token.type == "inline":
            match = _OPTION.match(token.content.strip())
            line = line_of(token, offset)
            if not match:
                problems.append(
                    Problem(path, line, "option must start with '[ ]' (wrong) or '[x]' (correct)")
                )
                continue
            correct = match.group("mark") in "xX"
            flag = match.group("flag")
            text = match.group("text")
            if correct and flag:
                problems.append(Problem(path, line, "the correct option must not name a red flag"))
            if not correct:
                if not flag:
                    problems.append(
                        Problem(
                            path,
                            line,
                            "wrong option needs '{flag=KEY}' naming the red flag it shows",
                        )
                    )
                elif flag.strip() not in flag_keys:
                    known = ", ".join(sorted(flag_keys)) or "none"
                    problems.append(
                        Problem(
                            path,
                            line,
                            f"wrong option names red flag '{flag}', which the card lacks "
                            f"(red flags: {known})",
                        )
                    )
            choices.append(
                Choice(
                    key=chr(ord("a") + len(choices)),
                    html=Markup(render_inline(text)),
                    text=plain_text(text),
                    correct=correct,
                    flag=flag.strip() if flag else None,
                    line=line,
                )
            )
    correct_count = sum(choice.correct for choice in choices)
    if len(choices) < 2:
        problems.append(
            Problem(path, section.line, "multiple choice needs a list of at least two options")
        )
    elif correct_count != 1:
        problems.append(
            Problem(
                path,
                section.line,
                f"multiple choice needs exactly one correct option ('[x]'), found {correct_count}",
            )
        )
    if len(problems) != before:
        return None
    prompt = render_tokens(prompt_tokens if has_text(prompt_tokens) else [], env, slots=slots)
    return MultipleChoice(prompt=prompt, choices=tuple(choices))

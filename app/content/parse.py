"""Parse one card file and check everything in it.

:func:`parse_card` never raises on bad input: it returns the card (when the
file is usable) and a list of :class:`~app.content.card.Problem`, each with the
line to fix.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token
from markupsafe import Markup

from app.content.binding import (
    EmbeddedDemo,
    LiveBinding,
    binding_problem,
    embedded_problem,
    is_demo_fence,
    parse_binding,
    parse_embedded,
)
from app.content.card import (
    ID_PATTERN,
    PLACEHOLDER,
    REQUIRED_SECTIONS,
    SECTIONS,
    Card,
    CardLink,
    Choice,
    FollowUp,
    MultipleChoice,
    ParseResult,
    Problem,
    RedFlag,
    Section,
    content_hash,
    slugify,
)
from app.content.frontmatter import check_fields, split_front_matter
from app.content.formula import FormulaError, to_mathml
from app.content.rendering import (
    CARD_LINK_SCHEME,
    MARKDOWN,
    plain_text,
    render_inline,
    render_tokens,
)

_KEY_SUFFIX = re.compile(r"\s*\{#([^}]*)\}\s*$")
_OPTION = re.compile(r"^\[(?P<mark>[ xX])\]\s+(?P<text>.*?)(?:\s*\{flag=(?P<flag>[^}]*)\})?\s*$")
_PLACEHOLDER_RE = re.compile(rf"\b{PLACEHOLDER}\b")


@dataclass
class _Entry:
    """A ``###`` entry inside Follow-ups or Red flags."""

    title: str
    key: str | None
    line: int
    tokens: list[Token]


@dataclass
class _RawSection:
    name: str
    line: int
    tokens: list[Token]
    entries: list[_Entry]


@dataclass
class _Found:
    """What one pass over the tokens finds: links, live numbers, embedded demos."""

    links: list[CardLink] = field(default_factory=list)
    bindings: list[LiveBinding] = field(default_factory=list)
    demos: list[EmbeddedDemo] = field(default_factory=list)

    @property
    def slots(self) -> list[LiveBinding | EmbeddedDemo]:
        return [*self.bindings, *self.demos]


def _walk(tokens: list[Token], offset: int, path: str, problems: list[Problem]) -> _Found:
    """Check formulas, number live bindings and demos, collect card links.

    Line numbers come from the enclosing block token. Each live number and demo
    gets an index in ``meta`` that the renderer turns into a slot.
    """
    found = _Found()
    line = offset
    for token in tokens:
        if token.map:
            line = offset + token.map[0] + 1
        if token.type == "math_block":
            _check_formula(token.content, True, path, line, problems)
        if token.type == "fence" and is_demo_fence(token.info):
            demo = parse_embedded(token.info, token.content, len(found.demos), line)
            token.meta["index"] = demo.index
            found.demos.append(demo)
            error = demo.error or embedded_problem(demo)
            if error:
                problems.append(Problem(path, line, error))
        for child in token.children or ():
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
    return found


def _check_formula(
    latex: str, display: bool, path: str, line: int, problems: list[Problem]
) -> None:
    try:
        to_mathml(latex, display=display)
    except FormulaError as exc:
        problems.append(Problem(path, line, str(exc)))


def _has_text(tokens: list[Token]) -> bool:
    return any(t.content.strip() for t in tokens if t.type not in ("heading_open", "heading_close"))


def parse_card(text: str, path: str) -> ParseResult:
    """Parse one card file; ``path`` is only used in messages and for the deck check."""
    problems: list[Problem] = []
    front = split_front_matter(text, path, problems)
    if front is None:
        return ParseResult(None, problems)
    body_start = front.body_start
    fields = check_fields(front, problems)

    body = "\n".join(text.splitlines()[body_start:])
    env: dict[str, Any] = {}
    tokens = MARKDOWN.parse(body, env)

    def line_of(token: Token) -> int:
        return body_start + (token.map[0] if token.map else 0) + 1

    found = _walk(tokens, body_start, path, problems)
    slots = found.slots
    placeholder_lines = sorted(
        {text.count("\n", 0, m.start()) + 1 for m in _PLACEHOLDER_RE.finditer(text)}
    )
    for line in placeholder_lines:
        problems.append(
            Problem(path, line, f"placeholder '{PLACEHOLDER}' left in the card: replace it")
        )

    # Split the token stream at ## and ### headings; footnotes come last.
    notes_tokens: list[Token] = []
    sections: list[_RawSection] = []
    current: _RawSection | None = None
    preamble_line: int | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "footnote_block_open":
            notes_tokens = tokens[i:]
            break
        if token.type == "heading_open" and token.tag in ("h1", "h2", "h3"):
            title = tokens[i + 1].content.strip()
            line = line_of(token)
            if token.tag == "h1":
                problems.append(
                    Problem(
                        path,
                        line,
                        "use '## Section' headings: the title comes from the front matter",
                    )
                )
            elif token.tag == "h2":
                current = _RawSection(title, line, [], [])
                sections.append(current)
            elif current is None:
                problems.append(Problem(path, line, f"'### {title}' must be inside a '##' section"))
            elif current.name in ("Follow-ups", "Red flags"):
                key_match = _KEY_SUFFIX.search(title)
                key = key_match.group(1).strip() if key_match else None
                clean = _KEY_SUFFIX.sub("", title) if key_match else title
                current.entries.append(_Entry(clean, key, line, []))
            else:
                current.tokens.extend(tokens[i : i + 3])
            i += 3
            continue
        if current is None:
            if (
                token.map
                and preamble_line is None
                and (token.content.strip() or token.type == "fence")
            ):
                preamble_line = line_of(token)
        elif current.entries:
            current.entries[-1].tokens.append(token)
        else:
            current.tokens.append(token)
        i += 1
    if preamble_line is not None:
        problems.append(
            Problem(
                path,
                preamble_line,
                "text before the first '## Section' heading: move it into a section",
            )
        )

    seen: dict[str, int] = {}
    suggested: set[str] = set()
    for section in sections:
        if section.name not in SECTIONS:
            hint = next(
                (name for name in SECTIONS if name.casefold() == section.name.casefold()), None
            )
            if hint:
                suggested.add(hint)
            expected = (
                f"did you mean '{hint}'?" if hint else f"expected one of: {', '.join(SECTIONS)}"
            )
            problems.append(
                Problem(path, section.line, f"unknown section '{section.name}': {expected}")
            )
            continue
        if section.name in seen:
            problems.append(
                Problem(
                    path,
                    section.line,
                    f"section '{section.name}' appears twice (first on line {seen[section.name]})",
                )
            )
            continue
        seen[section.name] = section.line
        if not section.entries and not _has_text(section.tokens):
            problems.append(Problem(path, section.line, f"section '{section.name}' is empty"))
    for name in REQUIRED_SECTIONS:
        # A misspelt heading already says which name it should have.
        if name not in seen and name not in suggested:
            problems.append(Problem(path, body_start + 1, f"missing required section '## {name}'"))
    by_name = {s.name: s for s in sections if s.name in SECTIONS}

    follow_ups = _entries(by_name.get("Follow-ups"), "follow-up", path, problems)
    red_flags = _entries(by_name.get("Red flags"), "red flag", path, problems)
    # Every key written counts, so a red flag missing its body is reported once.
    flag_keys = (
        {e.key for e in by_name["Red flags"].entries if e.key} if "Red flags" in by_name else set()
    )
    multiple_choice = _multiple_choice(
        by_name.get("Multiple choice"), flag_keys, path, problems, line_of, env, slots
    )

    if fields is None or problems:
        return ParseResult(None, problems, front.written_id)

    rendered = {
        name: Section(
            name,
            slugify(name),
            render_tokens(section.tokens, env, heading_shift=1, slots=slots),
            section.line,
        )
        for name, section in by_name.items()
        if name not in ("Follow-ups", "Red flags", "Multiple choice")
    }
    for name in ("Follow-ups", "Red flags"):
        # Text before the first ### is an introduction, shown above the entries.
        section = by_name[name]
        rendered[name] = Section(
            name, slugify(name), render_tokens(section.tokens, env, slots=slots), section.line
        )
    card = Card(
        id=fields["id"],
        title=fields["title"],
        question=Markup(render_inline(fields["question"])),
        question_text=plain_text(fields["question"]),
        deck=fields["deck"],
        tags=fields["tags"],
        difficulty=fields["difficulty"],
        minutes=fields["minutes"],
        sources=tuple(Markup(render_inline(source)) for source in fields["sources"]),
        path=path,
        content_hash=content_hash(text),
        sections=rendered,
        follow_ups=tuple(
            FollowUp(
                key,
                Markup(render_inline(title)),
                plain_text(title),
                render_tokens(body, env, slots=slots),
                line,
            )
            for key, title, body, line in follow_ups
        ),
        red_flags=tuple(
            RedFlag(
                key,
                Markup(render_inline(title)),
                plain_text(title),
                render_tokens(body, env, slots=slots),
                line,
            )
            for key, title, body, line in red_flags
        ),
        multiple_choice=multiple_choice,
        notes=render_tokens(notes_tokens, env, slots=slots),
        links=tuple(found.links),
        bindings=tuple(found.bindings),
        demos=tuple(found.demos),
        id_line=front.line_of("id"),
    )
    return ParseResult(card, [], card.id)


def _entries(
    section: _RawSection | None, kind: str, path: str, problems: list[Problem]
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
        if not _has_text(entry.tokens):
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
    section: _RawSection | None,
    flag_keys: set[str],
    path: str,
    problems: list[Problem],
    line_of: Any,
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
            line = line_of(token)
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
    prompt = render_tokens(prompt_tokens if _has_text(prompt_tokens) else [], env, slots=slots)
    return MultipleChoice(prompt=prompt, choices=tuple(choices))

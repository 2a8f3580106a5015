"""A card's front matter: the YAML block between the ``---`` lines, split off and checked.

:func:`split_front_matter` finds and reads the block, keeping the line each
field is written on so that messages point at it; :func:`check_fields` checks
every field and returns the clean values a :class:`~app.content.card.Card` is
built from.
"""

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from app.content.binding import load_yaml
from app.content.card import DIFFICULTIES, ID_PATTERN, OPTIONAL_FIELDS, REQUIRED_FIELDS, Problem

_FIELD = re.compile(r"^([A-Za-z_][\w-]*)\s*:")


@dataclass(frozen=True)
class FrontMatter:
    path: str
    data: dict[str, Any]
    field_lines: dict[str, int]  # the line each top-level field is written on
    body_start: int  # index in the file's lines of the body's first line

    def line_of(self, name: str) -> int:
        return self.field_lines.get(name, 1)

    @property
    def written_id(self) -> str | None:
        card_id = self.data.get("id")
        return card_id if isinstance(card_id, str) else None


def split_front_matter(text: str, path: str, problems: list[Problem]) -> FrontMatter | None:
    """Read the front matter, or report why it cannot be read and return None."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        problems.append(Problem(path, 1, "missing front matter: the file must start with '---'"))
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        problems.append(Problem(path, 1, "front matter is not closed: add a line '---' after it"))
        return None
    data = _load(lines[1:end], path, problems)
    if data is None:
        return None
    return FrontMatter(path, data, _field_lines(lines[1:end]), end + 1)


def _load(lines: list[str], path: str, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        data = load_yaml("\n".join(lines))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # The mark counts from 0 inside the block, which starts on the file's line 2.
        line = mark.line + 2 if mark is not None else 2
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(
            Problem(path, line, f"bad YAML in front matter: {reason}{_yaml_hint(lines, line)}")
        )
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(Problem(path, 2, "front matter must be a mapping of 'key: value' lines"))
        return None
    return data


def _yaml_hint(lines: list[str], line: int) -> str:
    """How to fix the usual YAML mistakes, looking at the reported line and the one above."""
    nearby = lines[max(0, line - 3) : line - 1]
    for text in reversed(nearby):
        _, _, value = text.partition(": ")
        if ": " in value and not value.lstrip().startswith(("'", '"')):
            return " (a value that contains ': ' must be quoted: key: \"...\")"
        if value.lstrip().startswith(("`", "@", "%")):
            return " (a value starting with a backtick, @ or % must be quoted)"
    return " (check indentation, and quote values with ': ', '#' or a leading '[')"


def _field_lines(lines: list[str]) -> dict[str, int]:
    # YAML loaders drop positions, so find each field's line by its 'key:' prefix.
    found: dict[str, int] = {}
    for number, line in enumerate(lines, start=2):
        match = _FIELD.match(line)
        if match and match.group(1) not in found:
            found[match.group(1)] = number
    return found


def check_fields(front: FrontMatter, problems: list[Problem]) -> dict[str, Any] | None:
    """Check every field; return the clean values, or None when any is wrong."""
    fields: dict[str, Any] = {}
    before = len(problems)
    for check in _CHECKS:
        problems.extend(Problem(front.path, line, text) for line, text in check(front, fields))
    return fields if len(problems) == before else None


# Each check yields (line, message) for what is wrong and puts what is right
# into ``fields``; they run in this order, which is the order of the messages.
_Check = Iterator[tuple[int, str]]


def _known_and_present(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    known = REQUIRED_FIELDS + OPTIONAL_FIELDS
    for name in front.data:
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
            hint = f": did you mean '{close[0]}'?" if close else ""
            message = f"unknown field '{name}'{hint} (known: {', '.join(known)})"
            yield front.line_of(str(name)), message
    for name in REQUIRED_FIELDS:
        if front.data.get(name) in (None, ""):
            yield 1, f"missing required field '{name}'"


def _id(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    card_id = front.data.get("id")
    if card_id is None:
        return
    if isinstance(card_id, str) and ID_PATTERN.match(card_id):
        fields["id"] = card_id
    else:
        yield (
            front.line_of("id"),
            f"id {card_id!r} must be lowercase letters, digits and '-' "
            "(it is permanent: progress is keyed on it)",
        )


def _text(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    for name in ("title", "question", "deck"):
        value = front.data.get(name)
        if value is not None and not isinstance(value, str):
            yield front.line_of(name), f"'{name}' must be text"
        elif isinstance(value, str):
            fields[name] = value.strip()


def _deck_folder(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    # The folder is what the library groups by, so the two must agree.
    deck = front.data.get("deck")
    deck_dir = Path(front.path).parent.name
    if isinstance(deck, str) and deck != deck_dir:
        yield (
            front.line_of("deck"),
            f"deck '{deck}' does not match the folder '{deck_dir}': "
            f"move the file to content/{deck}/ or set deck: {deck_dir}",
        )


def _difficulty(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    difficulty = front.data.get("difficulty")
    if difficulty is None:
        return
    if difficulty in DIFFICULTIES:
        fields["difficulty"] = difficulty
    else:
        yield (
            front.line_of("difficulty"),
            f"difficulty {difficulty!r} must be one of {', '.join(DIFFICULTIES)}",
        )


def _minutes(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    minutes = front.data.get("minutes")
    if minutes is None:
        return
    # bool is an int in Python, but 'minutes: true' is a mistake, not 1.
    if isinstance(minutes, int) and not isinstance(minutes, bool) and 1 <= minutes <= 120:
        fields["minutes"] = minutes
    else:
        yield front.line_of("minutes"), "minutes must be a whole number from 1 to 120"


def _lists(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    for name, message in (
        ("tags", "tags must be a list of words"),
        ("sources", "sources must be a list of text lines (Markdown)"),
    ):
        value = front.data.get(name, [])
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            fields[name] = tuple(value)
        else:
            yield front.line_of(name), message


def _aliases(front: FrontMatter, fields: dict[str, Any]) -> _Check:
    # A renamed card lists its old ids, so the history kept under them follows it.
    value = front.data.get("aliases", [])
    if isinstance(value, list) and all(isinstance(a, str) and ID_PATTERN.match(a) for a in value):
        if front.data.get("id") in value:
            yield front.line_of("aliases"), "aliases list the card's old ids, not its id"
        fields["aliases"] = tuple(value)
    else:
        yield (
            front.line_of("aliases"),
            "aliases must be a list of the card's old ids (lowercase letters, digits and '-')",
        )


_CHECKS = (
    _known_and_present,
    _id,
    _text,
    _deck_folder,
    _difficulty,
    _minutes,
    _lists,
    _aliases,
)

"""Follow-ups and red flags: the ``###`` entries with a stable ``{#key}``.

Progress and multiple-choice options refer to an entry by its key, so a key
must be written, well formed and unique within its section. A follow-up whose
key changed lists its old keys, ``{#new-key was=old-key}``, and its learners'
schedules move to the new key (app.practice.aliases).
:func:`check_entries` reports what is wrong and keeps the good entries;
:func:`render_follow_ups` and :func:`render_red_flags` render them.
"""

import re
from typing import Any, NamedTuple

from markdown_it.token import Token
from markupsafe import Markup

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.card import ID_PATTERN, FollowUp, Problem, RedFlag, slugify
from app.content.rendering import Rich, plain_text, render_inline, render_tokens
from app.content.sections import Entry, RawSection, has_text, line_of

_KEYED = re.compile(r"\{#[^}]*\}\s*$")


class KeyedEntry(NamedTuple):
    """An entry that passed its checks."""

    key: str
    title: str
    tokens: list[Token]
    line: int
    former: tuple[str, ...] = ()  # old keys, from ``was=``


def _split_key(written: str) -> tuple[str, list[str]]:
    """``new-key was=old-key`` -> (``new-key``, [``was=old-key``])."""
    key, *rest = written.split() or [""]
    return key, rest


def _keyed_item(tokens: list[Token]) -> bool:
    return any(t.type == "inline" and _KEYED.search(t.content) for t in tokens)


def check_entries(
    section: RawSection | None, kind: str, path: str, problems: list[Problem], offset: int = 0
) -> list[KeyedEntry]:
    """Check the entries of a Follow-ups or Red flags section; ``kind`` names one."""
    if section is None:
        return []
    listed = next((t for t in section.tokens if t.type == "bullet_list_open"), None)
    if listed is not None and (not section.entries or _keyed_item(section.tokens)):
        message = (
            f"write each {kind} as a '### ' heading ending in {{#key}}, with its text below, "
            "not as a list item"
        )
        problems.append(Problem(path, line_of(listed, offset), message))
        return []
    if not section.entries:
        message = f"'{section.name}' needs at least one '### ' {kind} with a body"
        problems.append(Problem(path, section.line, message))
        return []
    result = []
    keys: dict[str, int] = {}
    for entry in section.entries:
        checked = _check_entry(entry, kind, keys)
        if isinstance(checked, str):
            problems.append(Problem(path, entry.line, checked))
        else:
            result.append(checked)
    return [entry for entry in result if not _clashes(entry, keys, result, path, problems)]


def _clashes(
    entry: KeyedEntry,
    keys: dict[str, int],
    entries: list[KeyedEntry],
    path: str,
    problems: list[Problem],
) -> bool:
    """Whether an old key of ``entry`` is still in use or claimed twice (reported).

    Schedules under an old key move to the new one, so an old key that is some
    follow-up's current key would take that follow-up's history away.
    """
    for old in entry.former:
        if old in keys:
            message = (
                f"old key '{old}' is the key of the follow-up on line {keys[old]}: "
                "an old key is one no follow-up has any more"
            )
        elif any(old in other.former for other in entries if other is not entry):
            message = f"old key '{old}' is listed by two follow-ups: give it to one of them"
        else:
            continue
        problems.append(Problem(path, entry.line, message))
        return True
    return False


def _check_entry(entry: Entry, kind: str, keys: dict[str, int]) -> KeyedEntry | str:
    """The entry with its key, or what is wrong with it; records a good key in ``keys``."""
    if entry.key is None:
        suggestion = _suggested_key(entry.title)
        return f"{kind} '{entry.title}' needs a stable key: end the heading with {{#{suggestion}}}"
    key, rest = _split_key(entry.key)
    if not ID_PATTERN.match(key):
        return f"{kind} key '{key}' must be lowercase letters, digits and '-'"
    if key in keys:
        return f"{kind} key '{key}' is used twice (first on line {keys[key]})"
    keys[key] = entry.line
    if not has_text(entry.tokens):
        what = "its approach" if kind == "follow-up" else "why it is wrong and what to say instead"
        return f"{kind} '{entry.title}' has no body: write {what}"
    former = _former_keys(rest, key, kind)
    if isinstance(former, str):
        return former
    return KeyedEntry(key, entry.title, entry.tokens, entry.line, former)


def _former_keys(rest: list[str], key: str, kind: str) -> tuple[str, ...] | str:
    """The old keys of ``was=a,b``, or what is wrong with them."""
    if not rest:
        return ()
    usage = f"write {{#{key} was=old-key}} (old keys separated by commas)"
    if kind != "follow-up":
        return (
            f"only a follow-up lists old keys (its learners' schedules move to the new one); "
            f"a red flag's key can change freely: write {{#{key}}} and update the options' "
            "{flag=...}"
        )
    if len(rest) != 1 or not rest[0].startswith("was="):
        return f"unexpected '{' '.join(rest)}' after the key: {usage}"
    former = tuple(old.strip() for old in rest[0].removeprefix("was=").split(","))
    bad = [old for old in former if not ID_PATTERN.match(old) or old == key]
    if bad:
        return (
            f"old key '{bad[0]}' must be a former key of this follow-up, lowercase letters, "
            f"digits and '-': {usage}"
        )
    return former


def _suggested_key(title: str, limit: int = 40) -> str:
    """A key from the title's words, whole words only, at most ``limit`` characters."""
    key = ""
    for word in slugify(title).split("-"):
        longer = f"{key}-{word}" if key else word
        if len(longer) > limit:
            break
        key = longer
    return key or slugify(title)[:limit].strip("-")


def written_keys(section: RawSection | None) -> set[str] | None:
    # Every key written counts, so a red flag missing its body is reported once
    # (by check_entries), not again by each option that names it. None: no
    # section (reported already), so there is nothing to check names against.
    return {_split_key(entry.key)[0] for entry in section.entries if entry.key} if section else None


def render_follow_ups(
    entries: list[KeyedEntry], env: dict[str, Any], slots: list[LiveBinding | EmbeddedDemo]
) -> tuple[FollowUp, ...]:
    return tuple(FollowUp(*_rendered(entry, env, slots), aliases=entry.former) for entry in entries)


def render_red_flags(
    entries: list[KeyedEntry], env: dict[str, Any], slots: list[LiveBinding | EmbeddedDemo]
) -> tuple[RedFlag, ...]:
    return tuple(RedFlag(*_rendered(entry, env, slots)) for entry in entries)


def _rendered(
    entry: KeyedEntry, env: dict[str, Any], slots: list[LiveBinding | EmbeddedDemo]
) -> tuple[str, Markup, str, Rich, int]:
    return (
        entry.key,
        Markup(render_inline(entry.title)),
        plain_text(entry.title),
        render_tokens(entry.tokens, env, slots=slots),
        entry.line,
    )

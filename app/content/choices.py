"""The multiple choice: a prompt, then a list of ``[ ]`` and ``[x]`` options.

Exactly one option is correct; every wrong one names, with ``{flag=KEY}``, the
card's red flag that explains the mistake, so a wrong pick can show it.
"""

import difflib
import re
from dataclasses import replace
from typing import Any

from markdown_it.token import Token
from markupsafe import Markup

from app.content.binding import EmbeddedDemo, LiveBinding
from app.content.card import Choice, MultipleChoice, Problem
from app.content.rendering import plain_text, render_inline, render_tokens
from app.content.sections import RawSection, has_text, line_of

_OPTION = re.compile(r"^\[(?P<mark>[ xX])\]\s+(?P<text>.*?)(?:\s*\{flag=(?P<flag>[^}]*)\})?\s*$")


def check_multiple_choice(
    section: RawSection | None,
    flag_keys: set[str] | None,
    offset: int,
    path: str,
    problems: list[Problem],
    env: dict[str, Any],
    slots: list[LiveBinding | EmbeddedDemo],
) -> MultipleChoice | None:
    """Check and render the section; None when it is missing or has problems.

    ``flag_keys`` are the red flags' keys (None when the card has no Red flags
    section, already reported: then the names are not checked); ``offset`` is the line index the
    body starts at.
    """
    if section is None:
        return None
    before = len(problems)
    prompt_tokens, options, after = _split_list(section.tokens)
    if after:
        message = (
            "text after the options is not shown anywhere: move it above the list "
            "(the prompt), under the correct option (why it is right) or into the red "
            "flag it belongs to"
        )
        problems.append(Problem(path, line_of(after[0], offset), message))
    choices: list[Choice] = []
    for token, below in options:
        line = line_of(token, offset)
        choice = _choice(token.content.strip(), len(choices), line, flag_keys, path, problems)
        if choice is None:
            continue
        if has_text(below):
            if not choice.correct:
                message = (
                    "text under a wrong option is not shown: its red flag explains it "
                    "(only the correct option has an explanation under it)"
                )
                problems.append(Problem(path, line_of(_first_mapped(below), offset), message))
            choice = replace(choice, explanation=render_tokens(below, env, slots=slots))
        choices.append(choice)
    count_problem = _count_problem(choices)
    if count_problem:
        problems.append(Problem(path, section.line, count_problem))
    if len(problems) != before:
        return None
    prompt = render_tokens(prompt_tokens if has_text(prompt_tokens) else [], env, slots=slots)
    return MultipleChoice(prompt=prompt, choices=tuple(choices))


Option = tuple[Token, list[Token]]


def _split_list(tokens: list[Token]) -> tuple[list[Token], list[Option], list[Token]]:
    """The prompt (before the first list), the options, and what follows the list.

    Each option is its first line's inline token and the blocks under it
    (further paragraphs, nested lists: the explanation of the correct option).
    What follows the list has no place on the page, so the check reports it.
    """
    prompt: list[Token] = []
    items: list[list[Token]] = []  # each top-level list item's tokens, without open/close
    after: list[Token] = []
    depth = 0
    for token in tokens:
        opens = token.type == "bullet_list_open"
        closes = token.type == "bullet_list_close"
        top_item = depth == 1 and token.type in ("list_item_open", "list_item_close")
        depth += opens - closes
        if not items and depth == 0 and not closes:
            prompt.append(token)
        elif depth == 0:
            if token.map and not closes:
                after.append(token)
        elif top_item and token.type == "list_item_open":
            items.append([])
        elif items and not top_item and not (opens and depth == 1):
            items[-1].append(token)
    return prompt, [_option(item) for item in items if _has_inline(item)], after


def _has_inline(item: list[Token]) -> bool:
    return any(token.type == "inline" for token in item)


def _option(item: list[Token]) -> Option:
    """An item's first inline token (the option) and the blocks after its paragraph."""
    first = next(i for i, token in enumerate(item) if token.type == "inline")
    rest = item[first + 1 :]
    if rest and rest[0].type == "paragraph_close":
        rest = rest[1:]
    return item[first], rest


def _first_mapped(tokens: list[Token]) -> Token:
    return next((token for token in tokens if token.map), tokens[0])


def _choice(
    written: str,
    index: int,
    line: int,
    flag_keys: set[str] | None,
    path: str,
    problems: list[Problem],
) -> Choice | None:
    match = _OPTION.match(written)
    if not match:
        problems.append(
            Problem(path, line, "option must start with '[ ]' (wrong) or '[x]' (correct)")
        )
        return None
    correct = match.group("mark") in "xX"
    flag = match.group("flag")
    text = match.group("text")
    flag_problem = _flag_problem(correct, flag, flag_keys)
    if flag_problem:
        problems.append(Problem(path, line, flag_problem))
    # A choice with a flag problem is still built, so the count check sees it.
    return Choice(
        key=chr(ord("a") + index),
        html=Markup(render_inline(text)),
        text=plain_text(text),
        correct=correct,
        flag=flag.strip() if flag else None,
        line=line,
    )


def _flag_problem(correct: bool, flag: str | None, flag_keys: set[str] | None) -> str | None:
    if correct:
        return "the correct option must not name a red flag" if flag else None
    known = ", ".join(sorted(flag_keys or ())) or "none yet"
    if not flag:
        return (
            f"wrong option needs '{{flag=KEY}}' naming the red flag it shows (red flags: {known})"
        )
    if " " in flag.strip():
        return f"red flag key '{flag}' has spaces: keys are like {{flag=KEY}} (red flags: {known})"
    if flag_keys is not None and flag.strip() not in flag_keys:
        close = difflib.get_close_matches(flag.strip(), sorted(flag_keys), n=1, cutoff=0.6)
        hint = f": did you mean '{close[0]}'?" if close else ""
        return (
            f"wrong option names red flag '{flag}', which the card lacks{hint} (red flags: {known})"
        )
    return None


def _count_problem(choices: list[Choice]) -> str | None:
    correct_count = sum(choice.correct for choice in choices)
    if len(choices) < 2:
        return "multiple choice needs a list of at least two options"
    if correct_count != 1:
        return f"multiple choice needs exactly one correct option ('[x]'), found {correct_count}"
    return None

"""The multiple choice: a prompt, then a list of ``[ ]`` and ``[x]`` options.

Exactly one option is correct; every wrong one names, with ``{flag=KEY}``, the
card's red flag that explains the mistake, so a wrong pick can show it.
"""

import difflib
import re
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
            "(the prompt) or into the red flag it belongs to"
        )
        problems.append(Problem(path, line_of(after[0], offset), message))
    choices: list[Choice] = []
    for token in options:
        line = line_of(token, offset)
        choice = _choice(token.content.strip(), len(choices), line, flag_keys, path, problems)
        if choice is not None:
            choices.append(choice)
    count_problem = _count_problem(choices)
    if count_problem:
        problems.append(Problem(path, section.line, count_problem))
    if len(problems) != before:
        return None
    prompt = render_tokens(prompt_tokens if has_text(prompt_tokens) else [], env, slots=slots)
    return MultipleChoice(prompt=prompt, choices=tuple(choices))


def _split_list(tokens: list[Token]) -> tuple[list[Token], list[Token], list[Token]]:
    """The prompt (before the first list), the options' inline tokens, and what follows.

    Only the first level of the list holds options; nested lists belong to an
    option's text. What follows the list has no place on the page, so the
    check reports it.
    """
    prompt: list[Token] = []
    options: list[Token] = []
    after: list[Token] = []
    depth = 0
    in_list = False
    for token in tokens:
        if token.type == "bullet_list_open":
            depth += 1
            in_list = True
        elif token.type == "bullet_list_close":
            depth -= 1
        elif not in_list:
            prompt.append(token)
        elif depth == 0:
            if token.map:
                after.append(token)
        elif depth == 1 and token.type == "inline":
            options.append(token)
    return prompt, options, after


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
            "wrong option needs '{flag=KEY}' naming the red flag it shows "
            f"(red flags: {known})"
        )
    if " " in flag.strip():
        return f"red flag key '{flag}' has spaces: keys are like {{flag=KEY}} (red flags: {known})"
    if flag_keys is not None and flag.strip() not in flag_keys:
        close = difflib.get_close_matches(flag.strip(), sorted(flag_keys), n=1, cutoff=0.6)
        hint = f": did you mean '{close[0]}'?" if close else ""
        return f"wrong option names red flag '{flag}', which the card lacks{hint} (red flags: {known})"
    return None


def _count_problem(choices: list[Choice]) -> str | None:
    correct_count = sum(choice.correct for choice in choices)
    if len(choices) < 2:
        return "multiple choice needs a list of at least two options"
    if correct_count != 1:
        return f"multiple choice needs exactly one correct option ('[x]'), found {correct_count}"
    return None

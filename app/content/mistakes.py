"""Mistakes Markdown accepts without a word, found so the check can name them.

Each of these parses into *something*: a ``### Analogy`` becomes a sub-heading
of the section above, an unclosed code fence swallows the rest of the file, a
``$`` without its pair stays as a dollar sign, ``{live}"..."`` stays as text,
``[^2]`` without its note stays as brackets. :func:`find_mistakes` walks the
body's tokens once and reports each with the line to fix.
"""

import re
from collections.abc import Iterator

from markdown_it.token import Token

from app.content.card import SECTIONS, Problem

UNCLOSED_FENCE = "code fence opened here is never closed"
_KEY_SUFFIX = re.compile(r"\s*\{#([^}]*)\}\s*$")
_CODE_SPAN = re.compile(r"(`+).*?\1", re.S)
_FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\]")
_FENCE_CLOSE = re.compile(r"^[\s>]*(`{3,}|~{3,})\s*$")  # also in lists and quotes


def section_key(name: str) -> str:
    """A section name reduced to its letters, so 'Follow ups' meets 'Follow-ups'."""
    return re.sub(r"[^a-z]", "", name.casefold().replace("doesn't", "doesnot"))


_BY_KEY = {section_key(name): name for name in SECTIONS}


def find_mistakes(tokens: list[Token], body: list[str], offset: int, path: str) -> list[Problem]:
    """Problems with headings, fences, dollars, live numbers and footnotes in the body.

    ``body`` is the body's lines; ``offset`` the index of its first line in the file.
    """
    problems = []
    for index, token in enumerate(tokens):
        line = offset + (token.map[0] if token.map else 0) + 1
        for at, message in _token_mistakes(tokens, index, body):
            # ``at``: where in an inline token's text the mistake is, for its own line.
            extra = token.content.count("\n", 0, at) if at > 0 else 0
            problems.append(Problem(path, line + extra, message))
        if token.type == "fence":
            problems.extend(_code_mistakes(tokens, index, path, line))
    return problems


def _code_mistakes(tokens: list[Token], index: int, path: str, line: int) -> Iterator[Problem]:
    """A block to run needs its output after it; a block that prints should be run."""
    info = tokens[index].info.split()
    if info[:1] != ["python"]:
        return
    if "run" in info:
        after = next((t for t in tokens[index + 1 :] if t.nesting >= 0 and t.map), None)
        if after is None or after.type != "fence" or after.info.strip() != "output":
            message = "a 'python run' block needs a fenced 'output' block right after it"
            yield Problem(path, line, message)
    elif "print(" in tokens[index].content:
        message = (
            "this code prints: mark it 'python run' and put what it prints in an "
            "'output' block after it, so quizlab check --run-code keeps it true"
        )
        yield Problem(path, line, message, warning=True)


def _token_mistakes(tokens: list[Token], index: int, body: list[str]) -> Iterator[tuple[int, str]]:
    token = tokens[index]
    if token.type == "heading_open":
        yield from ((0, m) for m in _heading(token.tag, tokens[index + 1].content.strip()))
    elif token.type == "fence" and token.map and not _closed(token, body):
        yield (
            0,
            (
                f"{UNCLOSED_FENCE}: everything below is shown as code; "
                f"add a line {token.markup} after the code"
            ),
        )
    elif token.type == "inline":
        yield from _inline(token)


def _heading(tag: str, title: str) -> Iterator[str]:
    level = int(tag[1])
    hashes = "#" * level
    name = _BY_KEY.get(section_key(_KEY_SUFFIX.sub("", title)))
    if level >= 3 and name is not None:
        yield (
            f"'{hashes} {title}' is a section name at the wrong level: write '## {name}' "
            "(as it is, it is a sub-heading of the section above)"
        )
    elif level >= 4 and _KEY_SUFFIX.search(title):
        yield (
            f"'{hashes} {title}' has a {{#key}} but is not an entry: follow-ups and "
            "red flags are '### ' headings"
        )


def _closed(token: Token, body: list[str]) -> bool:
    assert token.map is not None
    last = token.map[1] - 1
    if last <= token.map[0] or last >= len(body):
        return False
    match = _FENCE_CLOSE.match(body[last])
    return match is not None and match.group(1)[0] == token.markup[0]


def _inline(token: Token) -> Iterator[tuple[int, str]]:
    children = token.children or []
    text = "".join(child.content for child in children if child.type == "text")
    raw = token.content
    if "{live}" in text:
        yield (
            raw.find("{live}"),
            (
                "'{live}' must be followed by backticks, not quotes: "
                "{live}`demo.output(param=value) = claim ± tolerance`"
            ),
        )
    for label in _FOOTNOTE.findall(text):
        message = f"footnote [^{label}] is not defined: add a line '[^{label}]: the note'"
        yield raw.find(f"[^{label}]"), message
    if "$" in text and _lone_dollar(raw, children):
        # Dollars pair from the left, so the one left open is the last.
        yield (
            raw.rfind("$"),
            ("a '$' without its closing '$': close the formula, or write \\$ for a dollar sign"),
        )


def _lone_dollar(raw: str, children: list[Token]) -> bool:
    written = _CODE_SPAN.sub("", raw).replace("\\$", "")
    used = sum(
        2 if c.type == "math_inline" else 4 for c in children if c.type.startswith("math_inline")
    )
    return written.count("$") > used


def fence_left_open(problems: list[Problem]) -> bool:
    return any(p.message.startswith(UNCLOSED_FENCE) for p in problems)


def suggest_section(name: str) -> str | None:
    """The section a misspelt heading means ('Redflags', 'When it does not apply')."""
    import difflib

    key = section_key(name)
    if key in _BY_KEY:
        return _BY_KEY[key]
    close = difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.75)
    return _BY_KEY[close[0]] if close else None

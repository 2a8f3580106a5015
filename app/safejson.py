"""JSON from strangers, parsed within limits: UTF-8 only, bounded depth, bounded numbers.

Python's :func:`json.loads` recurses once per ``[`` or ``{`` (100,000 of them
raise ``RecursionError``), turns a 5,000-digit number into a ``ValueError``
that is no ``JSONDecodeError``, and guesses UTF-16 or UTF-32 from the bytes it
is given. :func:`loads` checks the depth before parsing, refuses long numbers
while parsing, and reads bytes as UTF-8, so every way a document can be wrong
is one :class:`BadJSON` whose message says what and where.

A leaf: it imports nothing of app/, so the web's progress import and the
worker's request bodies share it.
"""

import json
import re
from typing import Any

MAX_DIGITS = 30  # no count, id or duration a Quizlab file or demo holds is longer

# A JSON string, escapes included (unrolled, so 16 MB of text scans at C speed).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


class BadJSON(ValueError):
    """Text that is not JSON, or JSON past a limit; the message says which."""


def _check_depth(text: str, max_depth: int) -> None:
    """Raise unless every bracket pairs up within ``max_depth`` levels.

    Strings are dropped first (brackets inside them do not nest), then the
    innermost pairs are removed once per level: at most ``max_depth`` passes.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(max_depth):
        if not brackets:
            return
        inner = _INNERMOST.sub("", brackets)
        if inner == brackets:  # no pair left to remove: they do not match
            return  # json.loads names the exact place
        brackets = inner
    if brackets:
        if _INNERMOST.search(brackets):
            raise BadJSON(f"nested more than {max_depth} levels deep")
        # What is left never pairs up; parsing it would still recurse as deep.
        raise BadJSON("its brackets [ ] and { } do not match")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise BadJSON(f"a number longer than {MAX_DIGITS} digits ({text[:12]}…)")
    return int(text)


def _decimal(text: str) -> float:
    if len(text) > MAX_DIGITS * 2:
        raise BadJSON(f"a number longer than {MAX_DIGITS} digits ({text[:12]}…)")
    return float(text)


def loads(data: str | bytes, *, max_depth: int) -> Any:
    """The value ``data`` holds; :class:`BadJSON` if it is not UTF-8 JSON within the limits.

    >>> loads('{"a": [1, 2.5]}', max_depth=2)
    {'a': [1, 2.5]}
    >>> loads("[[[1]]]", max_depth=2)
    Traceback (most recent call last):
    ...
    app.safejson.BadJSON: nested more than 2 levels deep
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadJSON(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at {exc.start}") from None
    _check_depth(data, max_depth)
    try:
        return json.loads(data, parse_int=_integer, parse_float=_decimal)
    except BadJSON:
        raise
    except RecursionError:  # unbalanced brackets that still nest too deep
        raise BadJSON(f"nested more than {max_depth} levels deep") from None
    except json.JSONDecodeError as exc:
        raise BadJSON(f"not JSON: {exc}") from None

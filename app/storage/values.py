"""What a column holds on both databases, checked before a value is sent to one.

SQLite and PostgreSQL differ where input is hostile: an ``INTEGER`` id is
64-bit on SQLite and 32-bit on PostgreSQL, and PostgreSQL text cannot hold
the NUL character that SQLite stores. A value that passes these checks is
stored alike by both, so an export from one imports into the other.
"""

MAX_INTEGER = 2**31 - 1  # PostgreSQL's INTEGER: every id, version and count column
_ASCII_DIGITS = frozenset("0123456789")


def whole_number(text: str, *, maximum: int = MAX_INTEGER) -> int | None:
    """``text`` as an int if it is ASCII digits from 0 to ``maximum``, else None.

    ``str.isdigit`` is no such test: it accepts ``²`` and ``٣``, which
    ``int`` refuses or reads as 3.

    >>> whole_number("42"), whole_number("²"), whole_number("3000000000"), whole_number("")
    (42, None, None, None)
    """
    if not text or len(text) > len(str(maximum)) or not _ASCII_DIGITS.issuperset(text):
        return None
    value = int(text)
    return value if value <= maximum else None


def storable_text(text: str) -> str:
    """``text`` unchanged if both databases can store it; ``ValueError`` says why not.

    >>> storable_text("a\\x00b")
    Traceback (most recent call last):
    ...
    ValueError: NUL characters cannot be stored: remove them
    """
    if "\x00" in text:
        raise ValueError("NUL characters cannot be stored: remove them")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"not valid Unicode: a lone surrogate (\\u{ord(text[exc.start]):04x}) "
            f"at character {exc.start}"
        ) from None
    return text

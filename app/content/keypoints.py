"""Key points: the few short phrases an interviewer listens for in an answer.

``## Key points`` is one bullet list of :data:`~app.content.card.KEY_POINTS_MIN`
to :data:`~app.content.card.KEY_POINTS_MAX` points, each one line of at most
:data:`~app.content.card.KEY_POINT_LENGTH` characters as written. A mock
interview shows them as a checklist beside the learner's answer, so each must
stand alone: no nested lists, no paragraphs around the list.
"""

from markdown_it.token import Token
from markupsafe import Markup

from app.content.card import (
    KEY_POINT_LENGTH,
    KEY_POINTS_MAX,
    KEY_POINTS_MIN,
    KeyPoint,
    Problem,
)
from app.content.rendering import plain_text, render_inline
from app.content.sections import RawSection, line_of

_ONLY_A_LIST = "'Key points' holds one bullet list and nothing else: one short point per '- ' line"
_ONE_LINE = "a key point is one short line: no nested lists, paragraphs or code in a bullet"


def check_key_points(
    section: RawSection | None, offset: int, path: str, problems: list[Problem]
) -> tuple[KeyPoint, ...]:
    """Check the section and render its points; empty when it is missing or has problems.

    ``offset`` is the line index the card's body starts at. A missing section
    is reported by :func:`~app.content.sections.check_sections`.
    """
    if section is None:
        return ()
    before = len(problems)
    points = _points(section, offset, path, problems)
    if len(problems) == before and not KEY_POINTS_MIN <= len(points) <= KEY_POINTS_MAX:
        message = (
            f"'Key points' needs {KEY_POINTS_MIN} to {KEY_POINTS_MAX} points, "
            f"found {len(points)}: list what an interviewer listens for"
        )
        problems.append(Problem(path, section.line, message))
    return tuple(points) if len(problems) == before else ()


def _points(section: RawSection, offset: int, path: str, problems: list[Problem]) -> list[KeyPoint]:
    """Each bullet as a point, in order; a section that is not one plain list is a problem."""
    tokens = section.tokens
    if not tokens:
        return []  # an empty section is reported by check_sections
    outside = [t for t in tokens[1:-1] if t.level == 0]
    if tokens[0].type != "bullet_list_open" or tokens[-1].type != "bullet_list_close" or outside:
        stray = next((t for t in tokens if t.type != "bullet_list_open" and t.map), tokens[0])
        problems.append(Problem(path, line_of(stray, offset), _ONLY_A_LIST))
        return []
    points = []
    for item in _items(tokens[1:-1]):
        line = line_of(item[0], offset)
        inside = [t.type for t in item[1:-1]]
        if not inside:
            problems.append(
                Problem(path, line, "key point is empty: write it or delete the bullet")
            )
        elif inside != ["paragraph_open", "inline", "paragraph_close"]:
            problems.append(Problem(path, line, _ONE_LINE))
        else:
            point = _point(item[2], line, path, problems)
            if point is not None:
                points.append(point)
    return points


def _items(tokens: list[Token]) -> list[list[Token]]:
    """The list's items, each from its ``list_item_open`` to its ``list_item_close``."""
    items: list[list[Token]] = []
    for token in tokens:
        if token.type == "list_item_open" and token.level == 1:
            items.append([])
        items[-1].append(token)
    return items


def _point(token: Token, line: int, path: str, problems: list[Problem]) -> KeyPoint | None:
    written = " ".join(token.content.split())
    if len(written) > KEY_POINT_LENGTH:
        message = (
            f"key point is {len(written)} characters: keep each to {KEY_POINT_LENGTH} "
            "(a phrase an interviewer listens for, not a paragraph)"
        )
        problems.append(Problem(path, line, message))
        return None
    return KeyPoint(Markup(render_inline(written)), plain_text(written), line)

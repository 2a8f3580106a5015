"""LaTeX formulas to MathML, rendered on the server.

Browsers typeset MathML natively and screen readers read it, so a card page
needs no math JavaScript. latex2mathml is lenient: it turns an unknown command
into ``<mi>\\foo</mi>`` and an unclosed group into a partial tree, which would
leave raw LaTeX on the page. :func:`to_mathml` checks for both and raises
:class:`FormulaError` so the content check can point at the formula.
"""

import re
import xml.etree.ElementTree as ET
from functools import lru_cache

import latex2mathml.converter

_LEFTOVER_COMMAND = re.compile(r"\\[A-Za-z]+")
# How many children each MathML element must have for the LaTeX to be complete.
_ARITY = {"mfrac": 2, "msup": 2, "msub": 2, "msubsup": 3, "mroot": 2, "munder": 2, "mover": 2}
_MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"


class FormulaError(ValueError):
    """A formula that cannot be shown as MathML; the message says what to fix."""


def _check_braces(latex: str) -> None:
    depth = 0
    escaped = False
    for char in latex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                raise FormulaError("unmatched '}' in formula")
    if depth:
        raise FormulaError("unclosed '{' in formula")


@lru_cache(maxsize=4096)
def to_mathml(latex: str, *, display: bool = False) -> str:
    """Convert one formula (without its ``$`` delimiters) to a ``<math>`` element.

    >>> to_mathml("d_k").startswith("<math")
    True
    """
    source = latex.strip()
    if not source:
        raise FormulaError("empty formula")
    _check_braces(source)
    try:
        mathml: str = latex2mathml.converter.convert(
            source, display="block" if display else "inline"
        )
    except Exception as exc:  # latex2mathml raises many private exception types
        raise FormulaError(f"cannot convert formula {source!r}: {exc}") from exc
    try:
        root = ET.fromstring(mathml)
    except ET.ParseError as exc:
        raise FormulaError(f"formula {source!r} is not supported by the converter") from exc
    for element in root.iter():
        name = element.tag.removeprefix(_MATHML_NS)
        leftover = _LEFTOVER_COMMAND.search(element.text or "")
        if leftover:
            raise FormulaError(f"unknown LaTeX command {leftover.group()} in formula")
        want = _ARITY.get(name)
        if want is not None and len(element) != want:
            raise FormulaError(f"incomplete formula {source!r}: a group is missing its arguments")
    return mathml

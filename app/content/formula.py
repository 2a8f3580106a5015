"""LaTeX formulas to MathML, rendered on the server.

Browsers typeset MathML natively and screen readers read it, so a card page
needs no math JavaScript. latex2mathml is lenient: it turns an unknown command
into ``<mi>\\foo</mi>`` and an unclosed group into a partial tree, which would
leave raw LaTeX on the page. :func:`to_mathml` checks for both and raises
:class:`FormulaError` so the content check can point at the formula.
"""

import difflib
import re
import xml.etree.ElementTree as ET
from functools import cache, lru_cache

import latex2mathml.commands
import latex2mathml.converter
import latex2mathml.symbols_parser

_LEFTOVER_COMMAND = re.compile(r"\\[A-Za-z]+")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_ENVIRONMENT = re.compile(r"\\begin\s*\{([^}]*)\}")
_OPERATORNAME = re.compile(r"\\operatorname\s*\{")
# Commands the converter knows but renders wrong (an operator wrapped around a
# row, which browsers draw as nothing or as a box): the fix is the bare symbol.
_MISRENDERED = ("mathrel", "mathbin", "mathop", "mathord", "mathpunct", "mathopen", "mathclose")
# About how many characters of text fit on one line of a phone screen.
PHONE_WIDTH = 36
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


def _reason(exc: Exception) -> str:
    """latex2mathml's errors carry no message; their class names say what is wrong."""
    if str(exc):
        return str(exc)
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", type(exc).__name__.removesuffix("Error")).lower()
    return f"{words} (is a '^', '_', '\\left' or '\\begin' missing its other half?)"


@cache
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """The commands (without ``\\``) and environments latex2mathml converts."""
    names: set[str] = set()
    for value in vars(latex2mathml.commands).values():
        items = value if isinstance(value, dict | set | tuple | list | frozenset) else (value,)
        names.update(x[1:] for x in items if isinstance(x, str) and x.startswith("\\"))
    names.update(x[1:] for x in latex2mathml.symbols_parser.SYMBOLS if x.startswith("\\"))
    environments = {name.rstrip("*") for name in latex2mathml.commands.MATRICES}
    environments |= {f"{name}*" for name in environments}
    return frozenset(n for n in names if n.isalpha()), frozenset(
        n.lstrip("\\") for n in environments
    )


def _check_commands(source: str) -> None:
    """Refuse commands and environments the converter would drop or draw wrong."""
    commands, environments = _known()
    for match in _COMMAND.finditer(source):
        name = match.group(1)
        if name in _MISRENDERED:
            raise FormulaError(
                f"\\{name} is not supported by the converter (it draws nothing) in "
                f"formula '{source}': write the symbol alone"
            )
        if name not in commands:
            raise FormulaError(
                f"unknown LaTeX command \\{name}{_hint(name, commands)} in formula '{source}'"
            )
    for match in _ENVIRONMENT.finditer(source):
        name = match.group(1).strip()
        if name not in environments:
            raise FormulaError(
                f"unknown environment '{name}'{_hint(name, environments, '')} in formula '{source}'"
            )


def _hint(name: str, known: frozenset[str], prefix: str = "\\") -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


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
    _check_commands(source)
    # latex2mathml draws \operatorname{fp32} as an empty operator and italic
    # letters; \mathrm gives the upright name an operator should have.
    converted = _OPERATORNAME.sub(r"\\mathrm{", source)
    try:
        mathml: str = latex2mathml.converter.convert(
            converted, display="block" if display else "inline"
        )
    except Exception as exc:  # latex2mathml raises many private exception types
        raise FormulaError(f"cannot convert formula '{source}': {_reason(exc)}") from exc
    try:
        root = ET.fromstring(mathml)
    except ET.ParseError as exc:
        raise FormulaError(f"formula '{source}' is not supported by the converter") from exc
    for element in root.iter():
        name = element.tag.removeprefix(_MATHML_NS)
        leftover = _LEFTOVER_COMMAND.search(element.text or "")
        if leftover:
            raise FormulaError(f"unknown LaTeX command {leftover.group()} in formula '{source}'")
        want = _ARITY.get(name)
        if want is not None and len(element) != want:
            raise FormulaError(f"incomplete formula '{source}': a group is missing its arguments")
    return mathml


# Rough widths, in characters, of how MathML lays its children out.
_SCRIPTS = {"msup", "msub", "msubsup", "munder", "mover", "munderover"}
_STACKED = {"mfrac", "mtable", "mtr"}


def rendered_width(mathml: str) -> float:
    """An estimate of a formula's rendered width, in characters of body text.

    Good enough to tell a formula that fits a phone's line from one that does
    not: scripts count at 70%, a fraction as its wider part, operators with
    their spacing.
    """
    return _width(ET.fromstring(mathml))


def _width(element: ET.Element) -> float:
    name = element.tag.removeprefix(_MATHML_NS)
    children = list(element)
    if not children:
        text = (element.text or "").strip()
        if name == "mspace":
            return 1.0
        return len(text) + (0.6 if name == "mo" else 0.0)
    widths = [_width(child) for child in children]
    if name in _STACKED:
        return max(widths)
    if name in _SCRIPTS:
        return widths[0] + 0.7 * max(widths[1:])
    if name in ("msqrt", "mroot"):
        return sum(widths) + 1
    return sum(widths)

"""Live numbers in card text: a claim bound to a demo output, and embedded demos.

Inline, ``{live}`score_variance.variance(d_k=128, divisor=none) = 128 ± 5%``
binds the number 128 to the ``variance`` output of the ``score_variance`` demo
run with those parameters. A fenced block whose info string is ``demo NAME``
embeds an interactive demo with its parameters as YAML.

This module parses them and checks each against its demo's spec in
:mod:`app.demos` (the demo exists, has that output, takes those parameters);
:mod:`app.live.results` runs them. Parsing never raises: a malformed binding keeps
its error message for the content check to report with its line.
"""

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from app.demos import InvalidParams, Scalar, UnknownDemo, demo_spec

_ROLE = re.compile(r"\{live\}`([^`\n]*)`")
_BINDING = re.compile(
    r"""^\s*(?P<demo>[a-z][a-z0-9_]*)\.(?P<output>[a-z][a-z0-9_]*)\s*
        (?:\((?P<params>[^)]*)\))?\s*
        =\s*(?P<claim>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*
        (?:(?:±|\+-)\s*(?P<tolerance>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?P<percent>%)?)?\s*$""",
    re.VERBOSE,
)
_PARAM = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*=\s*(.+?)\s*$")
SYNTAX = "{live}`DEMO.OUTPUT(PARAM=VALUE, ...) = CLAIM ± TOLERANCE`"


# libyaml's loader when PyYAML was built with it: several times faster than the
# pure-Python one, and cards hold a few YAML blocks each. Same safe subset.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, through libyaml when it is there."""
    return yaml.load(text, Loader=_YAML_LOADER)


def parse_value(text: str) -> Scalar:
    """A parameter value as written: a bool, an int, a float, or a word."""
    lowered = text.casefold()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip("\"'")


@dataclass(frozen=True)
class LiveBinding:
    """A number in the text, the demo output it claims to equal, and how closely."""

    index: int
    source: str
    demo: str = ""
    output: str = ""
    params: dict[str, Scalar] = field(default_factory=dict)
    claim_text: str = ""
    claim: float = math.nan
    tolerance: float = 0.0
    relative: bool = False
    error: str | None = None
    line: int = 0

    @property
    def allowed(self) -> float:
        """The largest difference from the claim that still counts as checked."""
        return abs(self.claim) * self.tolerance / 100 if self.relative else self.tolerance

    @property
    def tolerance_text(self) -> str:
        return f"{self.tolerance:g}%" if self.relative else f"{self.tolerance:g}"

    def agrees(self, measured: float) -> bool:
        return math.isfinite(measured) and abs(measured - self.claim) <= self.allowed * (1 + 1e-12)


def parse_binding(source: str, index: int, line: int = 0) -> LiveBinding:
    match = _BINDING.match(source)
    if not match or not match.group("claim") or match.group("claim") in "+-":
        return LiveBinding(
            index, source, error=f"live number '{source}' is not in the form {SYNTAX}", line=line
        )
    if match.group("tolerance") is None:
        return LiveBinding(
            index,
            source,
            error=f"live number '{source}' needs a tolerance, e.g. '± 5%' or '± 0.01'",
            line=line,
        )
    params: dict[str, Scalar] = {}
    raw_params = (match.group("params") or "").strip()
    for part in filter(None, (p.strip() for p in raw_params.split(","))) if raw_params else ():
        pair = _PARAM.match(part)
        if not pair:
            return LiveBinding(
                index, source, error=f"live number parameter '{part}' must be NAME=VALUE", line=line
            )
        params[pair.group(1)] = parse_value(pair.group(2))
    claim_text = match.group("claim")
    return LiveBinding(
        index=index,
        source=source,
        demo=match.group("demo"),
        output=match.group("output"),
        params=params,
        claim_text=claim_text,
        claim=float(claim_text.replace(",", "")),
        tolerance=float(match.group("tolerance")),
        relative=match.group("percent") is not None,
        line=line,
    )


@dataclass(frozen=True)
class EmbeddedDemo:
    """An interactive demo placed in a card, with the parameters it starts from."""

    index: int
    demo: str
    params: dict[str, Scalar]
    error: str | None = None
    line: int = 0


def parse_embedded(info: str, body: str, index: int, line: int) -> EmbeddedDemo:
    name = info.split(maxsplit=1)[1].strip() if len(info.split()) > 1 else ""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        return EmbeddedDemo(index, name, {}, "a demo block needs a demo name: ```demo NAME", line)
    try:
        data: Any = load_yaml(body) if body.strip() else {}
    except yaml.YAMLError as exc:
        return EmbeddedDemo(index, name, {}, f"bad YAML in demo block: {exc}", line)
    if not isinstance(data, dict) or not all(
        isinstance(v, int | float | bool | str) for v in data.values()
    ):
        return EmbeddedDemo(
            index, name, {}, "a demo block holds 'parameter: value' lines only", line
        )
    return EmbeddedDemo(index, name, {str(k): v for k, v in data.items()}, None, line)


def is_demo_fence(info: str) -> bool:
    return info.split(maxsplit=1)[0] == "demo" if info.strip() else False


def live_role_plugin(md: MarkdownIt) -> None:
    """Recognise ``{live}`...``` before backticks make it a code span.

    Hand-written rather than mdit_py_plugins' MyST role plugin: that one turns
    every ``{name}`...``` into a role token, so prose that happens to contain
    ``{x}`code``` would change meaning. Quizlab has exactly one role.
    """

    def rule(state: StateInline, silent: bool) -> bool:
        if not state.src.startswith("{live}`", state.pos):
            return False
        match = _ROLE.match(state.src, state.pos)
        if not match:
            return False
        if not silent:
            token = state.push("live_number", "", 0)
            token.content = match.group(1)
        state.pos = match.end()
        return True

    md.inline.ruler.before("backticks", "live_number", rule)


def binding_problem(binding: LiveBinding) -> str | None:
    """What is wrong with a live number's demo, output or parameters, if anything."""
    try:
        demo = demo_spec(binding.demo)
        if binding.output not in demo.outputs:
            outputs = ", ".join(demo.outputs)
            close = difflib.get_close_matches(binding.output, list(demo.outputs), n=1)
            hint = f": did you mean '{demo.name}.{close[0]}'?" if close else ""
            return (
                f"live number: demo '{demo.name}' has no output '{binding.output}'{hint} "
                f"(outputs: {outputs})"
            )
        demo.resolve(binding.params)
    except (UnknownDemo, InvalidParams) as exc:
        return f"live number: {exc}"
    return None


def embedded_problem(embedded: EmbeddedDemo) -> str | None:
    """What is wrong with a demo block's name or parameters, if anything."""
    try:
        demo_spec(embedded.demo).resolve(embedded.params)
    except (UnknownDemo, InvalidParams) as exc:
        return f"demo block: {exc}"
    return None

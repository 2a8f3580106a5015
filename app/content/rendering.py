"""Markdown to safe HTML: CommonMark, tables, footnotes, MathML and Pygments.

Everything a card author writes goes through :func:`sanitize` last, with an
allow-list of tags and attributes, so no script, event handler,
``javascript:`` URL or htmx attribute survives, even from inside a formula
(latex2mathml copies ``\\text{...}`` into the output unescaped).
"""

import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from app.content.binding import (
    EmbeddedDemo,
    LiveBinding,
    is_demo_fence,
    live_role_plugin,
    parse_binding,
)
from app.content.formula import FormulaError, to_mathml

CARD_LINK_SCHEME = "card:"
# Where a `card:ID` link points by default: the site's card page at the root
# (the static export rewrites these to its own files, app.export.html).
CARD_URL_TEMPLATE = "/cards/{}"

CardUrl = Callable[[str], str]
# The web app is the one that knows its URLs (and a path it is served under),
# so it passes its own builder in (:func:`card_urls`); a context variable, like
# the one for TeX formulas below, so every render call of the parser follows it.
_CARD_URL: ContextVar[CardUrl] = ContextVar("card_url", default=CARD_URL_TEMPLATE.format)


@contextmanager
def card_urls(build: CardUrl) -> Iterator[None]:
    """Within the block, a ``card:ID`` link points at ``build(ID)``.

    >>> with card_urls(lambda card_id: f"/quiz/cards/{card_id}"):
    ...     render_inline("[see](card:attention-rope)")
    '<a href="/quiz/cards/attention-rope" rel="noopener noreferrer">see</a>'
    """
    token = _CARD_URL.set(build)
    try:
        yield
    finally:
        _CARD_URL.reset(token)


_MATH_TAGS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
    "msqrt", "mroot", "mfrac", "msup", "msub", "msubsup", "munder", "mover", "munderover",
    "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "merror",
}  # fmt: skip
_HTML_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "section", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
_MATH_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "width",
    "height", "depth", "columnalign", "rowalign", "columnspacing", "rowspacing", "accent",
    "accentunder", "movablelimits", "largeop", "symmetric", "minsize", "maxsize", "form",
    "scriptlevel", "displaystyle", "notation", "linethickness", "encoding",
}  # fmt: skip
_ATTRIBUTES: dict[str, set[str]] = {
    "*": {"class", "id", "title", "style", "aria-label"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start"},
    **{tag: set(_MATH_ATTRIBUTES) for tag in _MATH_TAGS},
}
# ids only for footnote anchors, so card text cannot clobber the page's own ids;
# style only for the column alignment markdown-it writes for tables.
_FOOTNOTE_ID = re.compile(r"^fn(ref)?\d+(:\d+)?$")
_TABLE_ALIGN = re.compile(r"^text-align:(left|right|center)$")
_CLASS = re.compile(r"^[\w\- ]{1,200}$")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "id":
        return value if _FOOTNOTE_ID.match(value) else None
    if attribute == "style":
        return value if tag in {"td", "th"} and _TABLE_ALIGN.match(value) else None
    if attribute == "class":
        return value if _CLASS.match(value) else None
    return value


def sanitize(html: str) -> str:
    """Keep only allow-listed tags, attributes and URL schemes.

    >>> sanitize('<a href="javascript:alert(1)" onclick="x()" hx-get="/x">hi</a>')
    '<a rel="noopener noreferrer">hi</a>'
    """
    return _CLEANER.clean(html)


# Built once: nh3.clean converts the allow-lists on every call, about a sixth
# of the time spent loading a card (docs/performance.md).
_CLEANER = nh3.Cleaner(
    tags=_HTML_TAGS | _MATH_TAGS,
    attributes=_ATTRIBUTES,
    attribute_filter=_attribute_filter,
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer",
    strip_comments=True,
)


_FORMATTER = HtmlFormatter(nowrap=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    if not lang:
        return ""
    try:
        lexer = get_lexer_by_name(lang)
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _FORMATTER)


# Formulas are MathML on the site. An export for Anki asks for the TeX source
# instead, which Anki typesets with its own MathJax. A context variable rather
# than a parameter: every render call of the card parser follows it unchanged.
_TEX_FORMULAS: ContextVar[bool] = ContextVar("tex_formulas", default=False)


@contextmanager
def tex_formulas() -> Iterator[None]:
    """Within the block, formulas render as ``\\(...\\)`` and ``\\[...\\]`` TeX, not MathML.

    >>> with tex_formulas():
    ...     render_inline("$d_k$")
    '\\\\(d_k\\\\)'
    """
    token = _TEX_FORMULAS.set(True)
    try:
        yield
    finally:
        _TEX_FORMULAS.reset(token)


def _render_math(display: bool) -> Callable[..., str]:
    def render(
        _self: RendererHTML, tokens: Sequence[Token], idx: int, _opts: OptionsDict, _env: EnvType
    ) -> str:
        if _TEX_FORMULAS.get():
            tex = escape(tokens[idx].content.strip())
            return f'<div class="math-display">\\[{tex}\\]</div>' if display else f"\\({tex}\\)"
        try:
            mathml = to_mathml(tokens[idx].content, display=display)
        except FormulaError as exc:
            # Only reached for cards that also fail the check; keep the page readable.
            return f'<code class="math-error">{escape(str(exc))}</code>'
        return f'<div class="math-display">{mathml}</div>' if display else mathml

    return render


def _render_link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if href.startswith(CARD_LINK_SCHEME):
        token.attrSet("href", _CARD_URL.get()(href.removeprefix(CARD_LINK_SCHEME)))
    return self.renderToken(tokens, idx, options, env)


# Stand-ins for live numbers and embedded demos: plain words that survive the
# sanitiser, swapped for the parts of a :class:`Rich` afterwards. Each holds a
# random nonce made when the process starts, so no card text can write one:
# a fixed word, written in a card, once raised KeyError or became a live number.
_NONCE = secrets.token_hex(12)
_SLOT = re.compile(rf"QZSLOT{_NONCE}(LIVE|DEMO)(\d+)QZ")


def _slot(kind: str, index: object) -> str:
    return f"QZSLOT{_NONCE}{kind}{index}QZ"


def _render_live_number(
    _self: RendererHTML, tokens: Sequence[Token], idx: int, _opts: OptionsDict, _env: EnvType
) -> str:
    token = tokens[idx]
    if "index" in token.meta:
        return _slot("LIVE", token.meta["index"])
    # In a title or option there is no room for a badge: show the claim as written.
    binding = parse_binding(token.content, 0)
    return str(escape(binding.claim_text or token.content))


def _render_fence(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if is_demo_fence(token.info):
        return _slot("DEMO", token.meta["index"]) if "index" in token.meta else ""
    return self.fence(tokens, idx, options, env)


class Rich:
    """Rendered card HTML with live numbers and demos left as slots.

    The page fills each slot with the measured value or the demo's controls;
    ``__html__`` gives the HTML with each claim as written, where no results
    are at hand.
    """

    __slots__ = ("parts",)

    def __init__(self, parts: tuple["Markup | LiveBinding | EmbeddedDemo", ...]) -> None:
        self.parts = parts

    def __html__(self) -> str:
        return "".join(
            str(escape(p.claim_text)) if isinstance(p, LiveBinding) else str(p)
            for p in self.parts
            if not isinstance(p, EmbeddedDemo)
        )

    def __bool__(self) -> bool:
        return any(bool(p) if isinstance(p, Markup) else True for p in self.parts)

    def __str__(self) -> str:
        return self.__html__()

    def __contains__(self, text: str) -> bool:
        return text in self.__html__()


def build_markdown() -> MarkdownIt:
    """The one Markdown configuration that cards are parsed and rendered with."""
    md = (
        MarkdownIt("commonmark", {"html": True, "highlight": _highlight})
        .enable("table")
        .enable("strikethrough")
        .use(footnote_plugin)
        .use(dollarmath_plugin, allow_space=True, allow_digits=False, double_inline=True)
        .use(live_role_plugin)
    )
    md.add_render_rule("live_number", _render_live_number)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("math_inline", _render_math(display=False))
    md.add_render_rule("math_inline_double", _render_math(display=True))
    md.add_render_rule("math_block", _render_math(display=True))
    md.add_render_rule("link_open", _render_link_open)
    return md


MARKDOWN = build_markdown()


_ALIGN_STYLE = re.compile(r'style="text-align:(left|right|center)"')


def _scrollable(html: str) -> str:
    # Wide code, tables and formulas scroll inside their own box. A box that
    # scrolls must be reachable by keyboard (WCAG 2.1.1), so give it a tab stop.
    # This runs after sanitising, on tags markdown-it wrote without attributes.
    html = (
        html.replace("<pre>", '<pre tabindex="0">')
        .replace(
            "<table>",
            '<div class="table-scroll" tabindex="0" role="region" aria-label="Table"><table>',
        )
        .replace("</table>", "</table></div>")
        .replace('<div class="math-display">', '<div class="math-display" tabindex="0">')
    )
    # The Content-Security-Policy forbids inline styles: table alignment
    # becomes a class.
    return _ALIGN_STYLE.sub(r'class="align-\1"', html)


def render_tokens(
    tokens: Sequence[Token],
    env: dict[str, Any],
    *,
    heading_shift: int = 0,
    slots: Sequence[LiveBinding | EmbeddedDemo] = (),
) -> Rich:
    """Render block tokens from :data:`MARKDOWN` to sanitised HTML, slots kept apart.

    ``heading_shift`` raises author headings by that many levels, so the
    ``####`` an author writes inside a ``##`` section becomes an ``<h3>`` and
    the page's outline has no gaps.
    """
    if heading_shift:
        tokens = [_shifted(token, heading_shift) for token in tokens]
    html = _scrollable(sanitize(MARKDOWN.renderer.render(tokens, MARKDOWN.options, env)))
    lives = {s.index: s for s in slots if isinstance(s, LiveBinding)}
    demos = {s.index: s for s in slots if isinstance(s, EmbeddedDemo)}
    pieces = _SLOT.split(html)
    parts: list[Markup | LiveBinding | EmbeddedDemo] = [Markup(pieces[0])] if pieces[0] else []
    for i in range(1, len(pieces), 3):
        kind, index, after = pieces[i], int(pieces[i + 1]), pieces[i + 2]
        # A draft leaves out its broken demos: their slot stays empty.
        slot = lives.get(index) if kind == "LIVE" else demos.get(index)
        if slot is not None:
            parts.append(slot)
        if after:
            parts.append(Markup(after))
    return Rich(tuple(parts))


def _shifted(token: Token, shift: int) -> Token:
    if token.type not in ("heading_open", "heading_close"):
        return token
    level = max(3, int(token.tag[1]) - shift)
    return token.copy(tag=f"h{level}")


def render_inline(text: str) -> str:
    """Render one line of Markdown (a question, a title) without a ``<p>``."""
    return sanitize(MARKDOWN.renderInline(text))


_GROUP = r"\{([^{}]*)\}"
_LATEX_WORDS = [
    (re.compile(r"\\(?:text|mathrm|operatorname|mathbf|mathit|mathsf|mathtt)\s*" + _GROUP), r"\1"),
    (re.compile(r"\\sqrt\s*" + _GROUP), r"sqrt(\1)"),
    (re.compile(r"\\frac\s*" + _GROUP + r"\s*" + _GROUP), r"(\1)/(\2)"),
    (re.compile(r"\\(?:top|intercal)\b"), "T"),
    (re.compile(r"\\(?:cdot|times)\b"), "·"),
    (re.compile(r"\\approx\b"), "≈"),
    (re.compile(r"\\[,;!: ]"), " "),
]


def _latex_to_text(latex: str) -> str:
    """Formula source as readable text (``\\sqrt{d_k}`` -> ``sqrt(d_k)``), for labels."""
    text = latex
    for _ in range(5):  # nested groups unwrap from the inside out
        before = text
        for pattern, replacement in _LATEX_WORDS:
            text = pattern.sub(replacement, text)
        if text == before:
            break
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)
    return re.sub(r"[{}]", "", text).strip()


def plain_text(text: str) -> str:
    """A plain-text form of inline Markdown, for search, page titles and labels."""
    text = re.sub(r"\$+([^$]*)\$+", lambda m: _latex_to_text(m.group(1)), text)
    text = re.sub(r"\{live\}`[^`]*=\s*([^`=±]*?)\s*(?:±|\+-)[^`]*`", r"\1", text)
    return re.sub(r"[`*\\]", "", text).strip()

"""Card HTML made to stand on its own: links to other cards, code colours, slots.

The site's card HTML links other cards as ``/cards/ID`` and colours code with
CSS classes from ``static/app.css``. Outside the site neither holds: a static
copy links cards by relative path, and an Anki note carries no stylesheet of
ours when it arrives through the TSV import, so its code colours go inline.
"""

import re
from collections.abc import Callable

from markupsafe import Markup, escape
from pygments.formatters import HtmlFormatter

from app.content.binding import LiveBinding
from app.content.rendering import CARD_URL_TEMPLATE, Rich
from app.demos import demo_spec

_CARD_LINK = re.compile(
    r'<a href="' + re.escape(CARD_URL_TEMPLATE).replace(r"\{\}", r"([a-z0-9-]+)") + r'"[^>]*>'
    r"(.*?)</a>",
    re.DOTALL,
)
_CODE_BLOCK = re.compile(r'<pre tabindex="0">(.*?)</pre>', re.DOTALL)
_TOKEN_SPAN = re.compile(r'<span class="([A-Za-z0-9]+)">')
# The colours app.css gives code: Pygments' "default" style, light, on a light panel.
_STYLE_RULE = re.compile(r"^\.([A-Za-z0-9]+) \{ (.+?) \}", re.MULTILINE)
_STYLE_DEFS: str = HtmlFormatter(style="default").get_style_defs("")  # type: ignore[no-untyped-call]
_STYLES = dict(_STYLE_RULE.findall(_STYLE_DEFS))
CODE_BLOCK_STYLE = (
    "background:#f8f8f8;color:#1b1f24;padding:.6em;border-radius:6px;"
    "overflow-x:auto;text-align:left;line-height:1.35"
)


def link_cards(html: str, href: Callable[[str], str | None]) -> str:
    """Point each link to another card at ``href(card_id)``, or keep its text when that is None.

    >>> link_cards('see <a href="/cards/b" rel="x">B</a>', lambda card_id: None)
    'see B'
    >>> link_cards('<a href="/cards/b">B</a>', lambda card_id: f"{card_id}.html")
    '<a href="b.html">B</a>'
    """

    def replace(match: re.Match[str]) -> str:
        target = href(match.group(1))
        text = match.group(2)
        return text if target is None else f'<a href="{escape(target)}">{text}</a>'

    return _CARD_LINK.sub(replace, html)


def inline_code_styles(html: str) -> str:
    """Code highlighting as ``style`` attributes instead of classes, for HTML without our CSS.

    >>> html = '<pre tabindex="0"><code><span class="k">def</span></code></pre>'
    >>> inline_code_styles(html).split("<code>")[1]
    '<span style="color: #008000; font-weight: bold">def</span></code></pre>'
    """

    def span(match: re.Match[str]) -> str:
        style = _STYLES.get(match.group(1))
        return f'<span style="{style}">' if style else "<span>"

    def block(match: re.Match[str]) -> str:
        return f'<pre style="{CODE_BLOCK_STYLE}">{_TOKEN_SPAN.sub(span, match.group(1))}</pre>'

    return _CODE_BLOCK.sub(block, html)


def claims_only(content: Rich) -> str:
    """Card HTML with each live number as its claim and each demo as one line naming it."""
    pieces: list[str] = []
    for part in content.parts:
        if isinstance(part, LiveBinding):
            pieces.append(f'<span class="live">{escape(part.claim_text)}</span>')
        elif isinstance(part, Markup):
            pieces.append(str(part))
        else:
            title = demo_spec(part.demo).title
            pieces.append(f'<p class="demo"><em>Live demo in Quizlab: {escape(title)}</em></p>')
    return "".join(pieces)

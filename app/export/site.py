"""A static, read-only copy of some decks: plain files that any web server, or none, can show.

The layout mirrors the site's URLs, as files::

    index.html              the decks, and search over the cards
    decks/<deck>.html       a deck's cards
    cards/<card-id>.html    a card with everything shown
    assets/quizlab.css      static/app.css with static/export/site.css
    assets/site.js          search (over an index embedded in index.html), long formulas

Every link is relative and names a file, never a folder, so the copy works
from any path on a server and from ``file://``. Search needs no server: the
index is a JSON block in ``index.html`` (a page opened from ``file://`` may not
``fetch()`` another file). Pages have no forms and no practice: answers,
follow-ups and the multiple choice are all shown, and live numbers carry the
value last measured before the export, with the demo and the date.
"""

import json
import posixpath
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context
from markupsafe import Markup

from app.content.card import SECTIONS, Card
from app.content.library import Deck
from app.export.html import link_cards
from app.export.measured import Measured

# app/export/site.py -> the project root, where templates/ and static/ live.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
STYLESHEETS = (PROJECT_ROOT / "static" / "app.css", PROJECT_ROOT / "static" / "export" / "site.css")
SCRIPT = PROJECT_ROOT / "static" / "export" / "site.js"
# A file that marks a folder as an export, so a second export may clear it.
MARKER = ".quizlab-site"


class SiteError(Exception):
    """The output folder cannot be used; the message says why."""


@dataclass(frozen=True)
class SiteReport:
    """What an export wrote."""

    out: Path
    pages: int
    bytes: int


def card_path(card_id: str) -> str:
    return f"cards/{card_id}.html"


def deck_path(name: str) -> str:
    return f"decks/{name}.html"


@pass_context
def _href(context: Any, target: str) -> str:
    """The path of ``target`` (relative to the site's root) from the page being rendered."""
    here: str = context["here"]
    fragment = ""
    if "#" in target:
        target, fragment = target.split("#", 1)
        fragment = f"#{fragment}"
    if not target:
        return fragment
    return posixpath.relpath(target, posixpath.dirname(here) or ".") + fragment


_IDS = re.compile(r' id="[^"]*"')


def _environment(link: Callable[[str], str | None]) -> Environment:
    env = Environment(
        loader=FileSystemLoader(PROJECT_ROOT / "templates"),
        autoescape=True,  # card HTML arrives as Markup, already sanitised
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )

    @pass_context
    def card_links(context: Any, html: Markup) -> Markup:
        """Links to other cards as relative paths; to cards not exported, plain text."""

        def target(card_id: str) -> str | None:
            path = link(card_id)
            return _href(context, path) if path else None

        return Markup(link_cards(str(html), target))

    def without_ids(html: Markup) -> Markup:
        """HTML shown a second time on a page: its ids would be duplicates."""
        return Markup(_IDS.sub("", str(html)))

    env.globals["href"] = _href
    env.globals["SECTIONS"] = SECTIONS
    env.filters["card_links"] = card_links
    env.filters["without_ids"] = without_ids
    return env


def _prepare(out: Path) -> None:
    """Make ``out`` an empty folder; clear it only when a previous export wrote it."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"{out} is a file: give a folder to write the site into")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise SiteError(
                f"{out} is not empty and holds no earlier Quizlab export: "
                "give an empty or new folder"
            )
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    out.mkdir(parents=True, exist_ok=True)


def search_index(decks: Sequence[Deck]) -> list[dict[str, str]]:
    """What the search script looks through: one small entry per card."""
    return [
        {
            "url": card_path(card.id),
            "title": card.title,
            "question": card.question_text,
            "meta": f"{deck.name} · {card.difficulty} · {card.minutes} min",
            "text": card.search_text,
        }
        for deck in decks
        for card in deck.cards
    ]


def write_site(
    decks: Sequence[Deck], out: Path, *, measured: Measured, exported_at: datetime
) -> SiteReport:
    """Write the static copy of ``decks`` into the folder ``out``.

    Raises:
        SiteError: ``out`` is a file, or a folder with other things in it.
    """
    _prepare(out)
    exported: set[str] = {card.id for deck in decks for card in deck.cards}
    env = _environment(lambda card_id: card_path(card_id) if card_id in exported else None)
    common = {"exported": exported_at.date().isoformat(), "card_count": len(exported)}
    pages: dict[str, str] = {}

    def render(path: str, template: str, **context: Any) -> None:
        pages[path] = env.get_template(template).render(here=path, **common, **context)

    index = json.dumps(search_index(decks), ensure_ascii=False, separators=(",", ":"))
    # The JSON sits in a <script> element: "</" must not close it early.
    render("index.html", "export/home.html", decks=decks, index=Markup(index.replace("</", "<\\/")))
    for deck in decks:
        render(deck_path(deck.name), "export/deck.html", deck=deck)
        for card in deck.cards:
            render(card_path(card.id), "export/card.html", **_card_context(card, measured))
    (out / MARKER).write_text("Written by `quizlab export site`; the next export clears it.\n")
    assets = out / "assets"
    assets.mkdir()
    (assets / "quizlab.css").write_text("\n".join(p.read_text() for p in STYLESHEETS))
    shutil.copyfile(SCRIPT, assets / "site.js")
    for path, html in pages.items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return SiteReport(out, len(pages), size)


def _card_context(card: Card, measured: Measured) -> dict[str, Any]:
    return {
        "card": card,
        "values": measured.of(card),
        "demos": measured.demos_of(card),
    }

"""The static site export: its files, what a card page shows, its links, and the command line.

tests/test_browser_export.py opens the same kind of export in Chromium.
"""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from app.content.library import Library
from app.export import ResultSource, SiteError, choose_decks, measure, write_site
from app.export.site import MARKER
from app.storage.database import Database
from app.storage.results import DatabaseResultStore
from tests.exportcards import store_measurement, write_content

EXPORTED_AT = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """Three cards: testdeck's two, and `numbers` with a live number, a demo and code."""
    return write_content(tmp_path / "content")


def export(content: Path, out: Path, *decks: str, source: ResultSource | None = None) -> Path:
    chosen = choose_decks(Library(content).load(), decks)
    cards = [card for deck in chosen for card in deck.cards]
    write_site(chosen, out, measured=measure(cards, source), exported_at=EXPORTED_AT)
    return out


@pytest.fixture
def site(content: Path, tmp_path: Path) -> Path:
    """Every deck exported, one live number measured on 2026-05-04."""
    database = Database(f"sqlite:///{tmp_path / 'quizlab.sqlite3'}")
    database.upgrade()
    store_measurement(database, {"std": 11.2718, "variance": 127.05})
    try:
        return export(content, tmp_path / "site", source=DatabaseResultStore(database))
    finally:
        database.dispose()


def page(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(), "html.parser")


def local_links(html_file: Path) -> list[str]:
    """Every href and src of a page that points into the site."""
    soup = page(html_file)
    found = [str(tag.get("href") or tag.get("src")) for tag in soup.select("[href], [src]")]
    return [link for link in found if not urlsplit(link).scheme]


def test_the_site_has_a_page_per_deck_and_card(site: Path) -> None:
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert files == [
        MARKER,
        "assets/quizlab.css",
        "assets/site.js",
        "cards/test-live.html",
        "cards/test-other.html",
        "cards/test-scaling.html",
        "decks/numbers.html",
        "decks/testdeck.html",
        "index.html",
    ]


def test_every_link_is_relative_and_names_a_file_that_exists(site: Path) -> None:
    for html_file in site.rglob("*.html"):
        for link in local_links(html_file):
            parts = urlsplit(link)
            assert not parts.path.startswith("/"), (html_file, link)
            target = (html_file.parent / parts.path).resolve() if parts.path else html_file
            assert target.is_file(), (html_file, link)
            if parts.fragment:
                assert page(target).find(id=parts.fragment), (html_file, link)


def test_pages_have_no_forms_and_one_small_script(site: Path) -> None:
    for html_file in site.rglob("*.html"):
        soup = page(html_file)
        assert soup.find("form") is None, html_file
        inputs = [tag.get("id") for tag in soup.select("input, textarea, select, button")]
        assert inputs == (["q"] if html_file.name == "index.html" else []), html_file
        scripts = [tag.get("src") for tag in soup.select("script[src]")]
        assert [script.split("/")[-1] for script in scripts] == ["site.js"], html_file
        assert "hx-" not in html_file.read_text()
    assert (site / "assets" / "site.js").stat().st_size < 4096


def test_a_card_page_shows_everything_revealed(site: Path) -> None:
    card = page(site / "cards" / "test-scaling.html")
    assert card.select_one("h1#question").get_text().startswith("What do you divide")
    headings = [h.get_text() for h in card.select("article > section > h2")]
    assert headings == [
        "Answer",
        "TL;DR",
        "Key points",
        "Analogy",
        "Deep dive",
        "When it doesn't apply",
        "Quick scan",
        "Side by side",
        "Real-world examples",
        "Interviewer follow-ups",
        "Red flags",
        "Multiple choice",
        "Sources",
    ]
    follow_ups = card.select("ol.follow-ups details")
    assert len(follow_ups) == 2 and all(d.has_attr("open") for d in follow_ups)
    assert card.select_one("math") is not None  # formulas stay MathML: no script needed
    # The multiple choice, answered: the right option, and why each other one is wrong.
    right = card.select("#multiple-choice .notice-success")
    wrong = card.select("#multiple-choice .notice-error")
    assert len(right) == 1 and "Right:" in right[0].get_text()
    assert [w.select_one("a[href^='#red-flag-']")["href"] for w in wrong] == [
        "#red-flag-sqrt-d-model",
        "#red-flag-tuned",
    ]
    assert "It follows from the variance." in wrong[1].get_text()
    ids = [tag["id"] for tag in card.select("[id]")]
    assert len(ids) == len(set(ids))  # a red flag shown twice keeps its ids once
    # A link to another card points at its page.
    assert card.select_one("#when-it-doesn-t-apply a")["href"] == "test-other.html"
    assert card.select_one("a.tag")["href"] == "../index.html?q=attention"


def test_live_numbers_show_the_last_measured_value_with_demo_and_date(site: Path) -> None:
    card = page(site / "cards" / "test-live.html")
    badge = card.select_one("#answer .live .badge")
    assert badge.get_text() == "checked: 11.2718"
    assert badge["href"] == "#live-0"
    measured, unmeasured = card.select("#live-numbers li")
    assert measured.get_text(" ", strip=True) == (
        "11.31 ± 3%: checked, measured 11.2718 by score_variance.std(d_k=128, divisor=none) "
        "on 2026-05-04"
    )
    assert measured.select_one("time")["datetime"] == "2026-05-04"
    assert "not measured yet" in unmeasured.get_text()
    assert card.select_one("#follow-ups .live .badge") is None  # only the claim, as written
    demo = card.select_one("figure.demo")
    assert "Variance of q·k and the divisor" in demo.select_one("figcaption").get_text()
    rows = {r.th.get_text(): r.td.get_text() for r in demo.select("tbody tr")}
    assert rows == {"std": "11.2718", "variance": "127.05"}
    assert "exported on 2026-06-01" in card.select_one("footer").get_text()


def test_the_home_page_carries_a_search_index(site: Path) -> None:
    home = page(site / "index.html")
    index = json.loads(home.select_one("script#search-index").string)
    assert [entry["url"] for entry in index] == [
        "cards/test-live.html",
        "cards/test-other.html",
        "cards/test-scaling.html",
    ]
    assert index[2]["title"] == "The scaling factor"
    assert "softmax" in index[2]["text"]
    assert home.select_one("#search").has_attr("hidden")  # shown by search.js only
    decks = [a["href"] for a in home.select(".deck-list a")]
    assert decks == ["decks/numbers.html", "decks/testdeck.html"]


def test_one_deck_alone_links_other_cards_as_text(content: Path, tmp_path: Path) -> None:
    out = export(content, tmp_path / "numbers-only", "numbers")
    assert sorted(p.name for p in (out / "cards").iterdir()) == ["test-live.html"]
    tldr = page(out / "cards" / "test-live.html").select_one("#tl-dr")
    assert "see the scaling card" in tldr.get_text()
    assert tldr.select("a") == []
    assert page(out / "cards" / "test-live.html").select_one("#answer .badge") is None


def test_an_export_replaces_an_earlier_one_and_nothing_else(content: Path, tmp_path: Path) -> None:
    out = export(content, tmp_path / "site")
    (content / "testdeck" / "other.md").unlink()
    export(content, out)
    assert not (out / "cards" / "test-other.html").exists()

    other = tmp_path / "photos"
    other.mkdir()
    (other / "holiday.jpg").write_bytes(b"")
    with pytest.raises(SiteError, match="not empty and holds no earlier Quizlab export"):
        export(content, other)
    assert (other / "holiday.jpg").exists()


def quizlab(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_the_export_commands(content: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    database = Database(f"sqlite:///{data / 'quizlab.sqlite3'}")
    database.upgrade()
    store_measurement(database, {"std": 11.2718})
    database.dispose()
    env = {"QUIZLAB_CONTENT_DIR": str(content), "QUIZLAB_DATA_DIR": str(data)}

    site = quizlab("export", "site", "--deck", "numbers", str(tmp_path / "out"), env=env)
    assert site.returncode == 0, site.stderr
    assert "copy of 1 Quizlab card," in page(tmp_path / "out" / "index.html").get_text()
    card = page(tmp_path / "out" / "cards" / "test-live.html")
    assert card.select_one("#answer .badge").get_text() == "checked: 11.2718"

    tsv = quizlab("export", "anki", "--tsv", str(tmp_path / "cards.tsv"), env=env)
    assert tsv.returncode == 0, tsv.stderr
    assert "7 notes (3 cards and their follow-ups) from 2 deck(s)" in tsv.stderr
    assert (tmp_path / "cards.tsv").read_text().startswith("#separator:tab\n")

    unknown = quizlab("export", "anki", "--deck", "nope", str(tmp_path / "x.apkg"), env=env)
    assert unknown.returncode == 2
    assert "there is no deck called 'nope' (decks: numbers, testdeck)" in unknown.stderr
    assert not (tmp_path / "x.apkg").exists()

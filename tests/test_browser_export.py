"""The static export of the bundled decks in a real Chromium, from file:// and from a web server.

The server is Python's plain http.server, serving the export below a
sub-folder, so the test also shows that the copy does not assume it sits at
the root. Every number of every card is given a stored measurement, so the
pages show their badges, demo tables and dates as a real export would.
"""

import functools
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from app.content.card import Card
from app.content.library import Library
from app.export import choose_decks, measure, write_site
from app.live.results import LiveResults
from app.settings import PROJECT_ROOT
from app.storage.results import StoredResult
from tests.conftest import free_port

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
BUDGET_BYTES = 100 * 1024
MEASURED_AT = datetime(2026, 5, 4, tzinfo=UTC)


class EveryClaimMeasured:
    """A result store in which every live number measured exactly its claim."""

    def __init__(self, cards: list[Card]) -> None:
        self.results: dict[str, dict[str, Any]] = {}
        for card in cards:
            for binding in card.bindings:
                key = LiveResults.resolve(binding.demo, binding.params)[2]
                outputs = self.results.setdefault(key, {"outputs": {}})["outputs"]
                outputs[binding.output] = binding.claim
            for demo in card.demos:
                key = LiveResults.resolve(demo.demo, demo.params)[2]
                self.results.setdefault(key, {"outputs": {"value": 1.0}})

    def many(self, keys: Any) -> Mapping[str, StoredResult]:
        return {k: StoredResult(self.results[k], MEASURED_AT) for k in keys if k in self.results}


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled decks exported two folders deep under a web root."""
    root = tmp_path_factory.mktemp("www")
    decks = choose_decks(Library(PROJECT_ROOT / "content").load())
    cards = [card for deck in decks for card in deck.cards]
    out = root / "prep" / "ml-site"
    write_site(
        decks,
        out,
        measured=measure(cards, EveryClaimMeasured(cards)),
        exported_at=datetime(2026, 6, 1, tzinfo=UTC),
    )
    return out


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    """python's http.server on the web root; yields the export's URL below it."""
    handler = functools.partial(QuietHandler, directory=str(site.parent.parent))
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/prep/ml-site/"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@pytest.fixture(params=["file", "http"])
def base(request: pytest.FixtureRequest, site: Path) -> str:
    """The export's address: opened from disk, or served."""
    if request.param == "file":
        return site.as_uri() + "/"
    server_url: str = request.getfixturevalue("server")
    return server_url


def test_every_link_resolves(page: Page, base: str) -> None:
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    to_visit, seen, fragments = [base + "index.html"], set(), []
    while to_visit:
        url = to_visit.pop()
        if url in seen:
            continue
        seen.add(url)
        page.goto(url)  # raises on a file that is not there
        links = page.eval_on_selector_all(
            "a[href], link[href], script[src]", "els => els.map(e => e.href || e.src)"
        )
        for link in links:
            target, fragment = urldefrag(link)
            if not target.startswith(base):
                assert urlsplit(target).scheme in ("http", "https", "mailto"), (url, link)
                continue  # the sources' own pages, elsewhere on the web
            if fragment:
                fragments.append((url, target, fragment))
            if target.endswith(".html") or "?" in target:
                to_visit.append(target)
    assert failed == []
    pages = {url for url in seen if "?" not in url}
    bundled = Library(PROJECT_ROOT / "content").load()
    assert len(pages) == 1 + len(bundled.decks) + len(bundled.cards)  # home, decks, cards
    missing = []
    for url, target, fragment in fragments:
        if target != page.url:
            page.goto(target)
        if page.locator(f"[id='{fragment}']").count() != 1:
            missing.append((url, fragment))
    assert missing == []


def test_search_finds_a_card_without_a_server(page: Page, base: str) -> None:
    page.goto(base + "index.html")
    page.get_by_label("Search cards by title, question or tag").fill("divide")
    hit = page.locator("#search-results .card-list a", has_text="The scaling factor")
    expect(hit).to_be_visible()
    expect(page.locator("#decks")).to_be_hidden()
    hit.click()
    expect(page.locator("h1#question")).to_contain_text("What do you divide")
    # A tag on the card searches for it.
    page.locator("a.tag", has_text="softmax").click()
    expect(page.get_by_label("Search cards by title, question or tag")).to_have_value("softmax")
    expect(page.locator("#search-results h2")).to_contain_text("match “softmax”")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pages_have_no_accessibility_violations(
    page: Page, server: str, artifacts: Path, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    name = "desktop" if viewport is DESKTOP else "phone"
    axe = Axe()
    for label, path in [
        ("home", "index.html"),
        ("search", "index.html?q=softmax"),
        ("deck", "decks/attention.html"),
        ("card", "cards/attention-scaling-factor.html"),
        ("card-demos", "cards/attention-flash-online-softmax.html"),
    ]:
        page.goto(server + path)
        results = axe.run(page)
        assert results.violations_count == 0, (label, results.generate_report())
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (label, f"page scrolls sideways by {overflow}px")
        page.screenshot(path=artifacts / f"export-{label}-{name}.png", full_page=True)


def test_the_first_load_of_every_card_fits_the_budget(page: Page, server: str) -> None:
    # Every load a first load: no stylesheet from the cache of the card before.
    page.context.new_cdp_session(page).send("Network.setCacheDisabled", {"cacheDisabled": True})
    sizes: list[tuple[str, int]] = []

    def record(request: Any) -> None:
        measured = request.sizes()
        sizes.append((request.url, measured["responseBodySize"] + measured["responseHeadersSize"]))

    page.on("requestfinished", record)
    loads = {}
    for card_id in sorted(Library(PROJECT_ROOT / "content").load().cards):
        sizes.clear()
        page.goto(server + f"cards/{card_id}.html", wait_until="networkidle")
        assert len(sizes) == 3, sizes  # the page, its stylesheet and its one script
        loads[card_id] = sum(size for _url, size in sizes)
    heaviest = max(loads, key=loads.__getitem__)
    assert loads[heaviest] <= BUDGET_BYTES, (heaviest, loads[heaviest])

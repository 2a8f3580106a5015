"""A learner in a real Chromium: search, open a card, answer, reveal, quiz, follow-ups.

Screenshots land in test-artifacts/ for a person to look at. The card page's
first load is weighed against the 100 KB budget, and axe-core audits every
page at desktop and phone width with everything revealed.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from app.settings import Settings
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

FIRST_CARD = "attention-scaling-factor"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
BUDGET_BYTES = 100 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, worker_url: str) -> Iterator[LiveServer]:
    """The app on the bundled content with a real worker, served by uvicorn on a free port."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"), reload_content=False, worker_url=worker_url
    )
    with LiveServer(settings) as live:
        yield live


def no_horizontal_scroll(page: Page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"page scrolls sideways by {overflow}px"


def test_learner_journey(page: Page, server: LiveServer, artifacts: Path) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Practise for the ML interview")

    # Search as you type: htmx replaces the results without a page load.
    page.get_by_label("Search cards by title, question or tag").fill("divide")
    result = page.locator("#results ul.card-list li > a", has_text="scaling factor")
    expect(result).to_be_visible()
    assert "q=divide" in page.url  # the URL reflects the search, so it can be shared
    # The fragment replaces the region whole: one #results, never one inside another.
    expect(page.locator("[id=results]")).to_have_count(1)
    result.click()
    expect(page).to_have_url(server.url + f"/cards/{FIRST_CARD}")

    # Type an answer, then reveal with the keyboard alone (Space outside the box).
    box = page.get_by_label("Your answer")
    box.fill("Divide by sqrt(d_k) so the score variance stays near 1.")
    page.keyboard.press("Tab")  # leave the box: focus goes to the Reveal button
    page.locator("h1#question").click()  # and off it, so Space is the page shortcut
    page.keyboard.press("Space")
    expect(page.locator(".your-answer .typed")).to_have_text(
        "Divide by sqrt(d_k) so the score variance stays near 1."
    )
    expect(page.locator("h2#your-answer-heading")).to_be_focused()
    expect(page.locator("#answer-heading")).to_have_text("Answer")

    # A follow-up's approach opens from the keyboard.
    first_follow_up = page.locator("ol.follow-ups > li").first
    summary = first_follow_up.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(first_follow_up.locator("details")).to_have_attribute("open", "")
    expect(first_follow_up.locator(".approach")).to_be_visible()

    # A wrong option shows its red flag's explanation.
    page.locator("#multiple-choice input[type=radio]").first.check()
    page.get_by_role("button", name="Check my choice").click()
    notice = page.locator("#choice-result .notice-error")
    expect(notice).to_contain_text("is a red flag")
    page.screenshot(path=artifacts / "card-revealed-desktop.png", full_page=True)

    page.set_viewport_size(PHONE)
    no_horizontal_scroll(page)
    page.screenshot(path=artifacts / "card-revealed-phone.png", full_page=True)


def test_card_first_load_fits_the_budget(page: Page, server: LiveServer) -> None:
    sizes: list[tuple[str, int]] = []

    def record(response: object) -> None:
        request = response.request  # type: ignore[attr-defined]
        measured = request.sizes()
        sizes.append((request.url, measured["responseBodySize"] + measured["responseHeadersSize"]))

    page.on("requestfinished", lambda request: record(request.response()))
    page.goto(server.url + f"/cards/{FIRST_CARD}", wait_until="networkidle")
    total = sum(size for _, size in sizes)
    assert len(sizes) >= 3  # the page, its stylesheet and scripts were all counted
    assert total <= BUDGET_BYTES, sizes


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pages_have_no_accessibility_violations(
    page: Page, server: LiveServer, artifacts: Path, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    name = "desktop" if viewport is DESKTOP else "phone"
    axe = Axe()
    for label, url in [
        ("home", "/"),
        ("deck", "/decks/attention"),
        ("search", "/?q=softmax"),
        ("scan", f"/cards/{FIRST_CARD}?view=scan"),
    ]:
        page.goto(server.url + url)
        results = axe.run(page)
        assert results.violations_count == 0, (label, results.generate_report())
        no_horizontal_scroll(page)
        page.screenshot(path=artifacts / f"{label}-{name}.png", full_page=True)

    # The card with everything revealed: answer, follow-ups open, a quiz result.
    page.goto(server.url + f"/cards/{FIRST_CARD}")
    page.get_by_role("button", name="Reveal answer").click()
    expect(page.locator(".your-answer")).to_be_visible()
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    page.locator("#multiple-choice input[type=radio]").nth(1).check()
    page.get_by_role("button", name="Check my choice").click()
    expect(page.locator("#choice-result .notice")).to_be_visible()
    results = axe.run(page)
    assert results.violations_count == 0, ("card", results.generate_report())
    no_horizontal_scroll(page)
    page.screenshot(path=artifacts / f"card-{name}.png", full_page=True)


def test_missing_card_is_a_404_page(page: Page, server: LiveServer) -> None:
    response = page.goto(server.url + "/cards/no-such-card")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")


def test_embedded_demo_updates_in_place(page: Page, server: LiveServer, artifacts: Path) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + f"/cards/{FIRST_CARD}")
    page.get_by_role("button", name="Reveal answer").click()
    # The badges arrive in one request after the reveal, replacing "not yet run".
    first_badge = page.locator("span.live .badge").first
    expect(first_badge).to_contain_text("checked", timeout=30_000)
    expect(page.locator("span.live .badge", has_text="not yet run")).to_have_count(0)

    demo = page.locator("figure.demo").first
    variance = (
        demo.locator("table.demo-numbers tbody tr", has_text="variance").first.locator("td").first
    )
    expect(variance).to_be_visible(timeout=30_000)
    before_value = variance.inner_text()
    before_chart = demo.locator("svg.chart").first.inner_html()

    d_k = demo.get_by_label("d_k", exact=True)
    d_k.fill("16")
    d_k.dispatch_event("change")
    # A status fragment stands in while the worker computes, then the result.
    updated = page.wait_for_function(
        """([slot, before]) => {
            const cell = document.querySelector(`#${slot} table.demo-numbers tbody tr td`);
            return cell && cell.textContent !== before && cell.textContent;
        }""",
        arg=[demo.get_attribute("id"), before_value],
        timeout=30_000,
    )
    assert abs(float(updated.json_value()) - 1.0) < 0.1  # sqrt(d_k) scaling: variance 1
    assert demo.locator("svg.chart").first.inner_html() != before_chart
    assert demo.locator("svg.chart title").first.text_content()  # the chart has a text alternative
    demo.scroll_into_view_if_needed()
    demo.screenshot(path=artifacts / "demo-desktop.png")

    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    page.set_viewport_size(PHONE)
    no_horizontal_scroll(page)
    demo.screenshot(path=artifacts / "demo-phone.png")

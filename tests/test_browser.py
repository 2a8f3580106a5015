"""A learner in a real Chromium: search, open a card, answer, reveal, quiz, follow-ups.

Screenshots land in test-artifacts/ for a person to look at. The card page's
first load is weighed against the 100 KB budget, and axe-core audits every
page at desktop and phone width with everything revealed.
"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from app.content.library import Library
from app.settings import PROJECT_ROOT, Settings
from tests.conftest import LiveServer
from tests.layout import no_horizontal_scroll

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


def test_learner_journey(page: Page, server: LiveServer, artifacts: Path) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Practise for the ML interview")

    # Search as you type: htmx replaces the results without a page load.
    page.get_by_label("Search cards by title, question, tag or text").fill("divide")
    result = page.locator("#results ul.card-list li > a", has_text="scaling factor")
    expect(result).to_be_visible()
    assert "q=divide" in page.url  # the URL reflects the search, so it can be shared
    # The fragment replaces the region whole: one #results, never one inside another.
    expect(page.locator("[id=results]")).to_have_count(1)
    result.click()
    expect(page).to_have_url(server.url + f"/cards/{FIRST_CARD}")
    assert page.context.cookies() == []  # reading pages needs no session

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
    # The first form started a session; app.js put its new token in the page, so the
    # multiple choice below (the second form) is accepted.
    assert [cookie["name"] for cookie in page.context.cookies()] == ["quizlab_session"]

    # A follow-up's approach opens from the keyboard.
    first_follow_up = page.locator("ol.follow-ups > li").first
    summary = first_follow_up.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(first_follow_up.locator("details")).to_have_attribute("open", "")
    expect(first_follow_up.locator(".approach")).to_be_visible()

    # A wrong option shows its red flag's explanation. Options are shuffled per
    # learner, so pick a wrong one by its written letter, not by position.
    quiz = Library(PROJECT_ROOT / "content").load().cards[FIRST_CARD].multiple_choice
    assert quiz is not None
    wrong = next(choice for choice in quiz.choices if not choice.correct)
    page.locator(f"#multiple-choice input[value='{wrong.key}']").check()
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


BUNDLED_CARDS = sorted(Library(PROJECT_ROOT / "content").load().cards)


def reveal_everything(page: Page) -> None:
    """Reveal the card, open every follow-up, and wait for every live number and demo."""
    page.get_by_role("button", name="Reveal answer").click()
    expect(page.locator(".your-answer")).to_be_visible()
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    expect(page.locator(".badge-pending")).to_have_count(0, timeout=60_000)
    expect(page.locator(".demo-status")).to_have_count(0, timeout=60_000)


def test_every_card_revealed_fits_a_phone(page: Page, server: LiveServer, artifacts: Path) -> None:
    """Long formulas, tables and code scroll inside their own box, whatever fonts are installed."""
    assert len(BUNDLED_CARDS) >= 15
    page.set_viewport_size(PHONE)
    for card_id in BUNDLED_CARDS:
        page.goto(server.url + f"/cards/{card_id}")
        page.evaluate("window.sameDocument = true")
        reveal_everything(page)
        no_horizontal_scroll(page, card_id)
        # Revealed in place: nothing in the swapped-in fragment reloaded the page.
        assert page.evaluate("window.sameDocument") is True, card_id
        # A formula that scrolls can be reached from the keyboard.
        scrolling = page.locator("math[data-scrolls]")
        for formula in scrolling.all():
            assert formula.get_attribute("tabindex") == "0"
    # quizlab check --strict keeps wide inline formulas off the bundled cards, so
    # the scrolling box is checked on a formula made wider than any phone.
    page.goto(server.url + "/cards/attention-flash-online-softmax")
    reveal_everything(page)
    page.evaluate(
        """() => {
            const formula = document.querySelector("math:not([display='block'])");
            for (let i = 0; i < 40; i++) formula.appendChild(formula.lastElementChild.cloneNode(true));
            window.dispatchEvent(new Event("resize"));
        }"""
    )
    formula = page.locator("math[data-scrolls]").first
    expect(formula).to_have_attribute("tabindex", "0")
    no_horizontal_scroll(page, "widened formula")
    formula.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "formula-scrolls-phone.png")


def test_a_formula_in_a_heading_keeps_its_lines_evenly_spaced(
    page: Page, server: LiveServer
) -> None:
    """QKᵀ in the question must not push its line away from the next."""
    for viewport in [DESKTOP, PHONE]:
        page.set_viewport_size(viewport)
        page.goto(server.url + f"/cards/{FIRST_CARD}")
        heading = page.locator("h1#question")
        expect(heading.locator("math")).to_have_count(1)
        height, line = heading.evaluate(
            "h => [h.getBoundingClientRect().height, parseFloat(getComputedStyle(h).lineHeight)]"
        )
        lines = round(height / line)
        assert lines >= 2 and abs(height - lines * line) <= 1, (viewport, height, line)


def test_a_revealed_card_prints_its_content_with_every_approach(
    page: Page, server: LiveServer, artifacts: Path
) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + f"/cards/{FIRST_CARD}")
    reveal_everything(page)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
    page.emulate_media(media="print")
    for chrome in [
        page.get_by_role("navigation", name="Main"),
        page.get_by_role("navigation", name="Card view"),
        page.get_by_role("button", name="Check my choice"),
        page.locator("form.demo-controls").first,
        page.locator(".site-footer"),
    ]:
        expect(chrome).to_be_hidden()
    approaches = page.locator("ol.follow-ups .approach")
    assert approaches.count() >= 3
    for approach in approaches.all():
        expect(approach).to_be_visible()
    expect(page.locator("table.demo-numbers").first).to_be_visible()  # results stay
    page.screenshot(path=artifacts / "card-print.png", full_page=True)
    page.emulate_media(media="screen")
    expect(approaches.first).to_be_hidden()  # the screen keeps them closed


def test_search_as_you_type_keeps_one_history_entry(page: Page, server: LiveServer) -> None:
    """Typing replaces the URL instead of pushing one entry per keystroke; Back restores it."""
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/")
    entries = page.evaluate("history.length")
    box = page.get_by_role("searchbox")
    box.press_sequentially("soft", delay=300)  # slower than the 200 ms debounce: 4 requests
    expect(page.locator("#results h2")).to_contain_text("match “soft”")
    box.press_sequentially("max", delay=300)
    expect(page.locator("#results h2")).to_contain_text("match “softmax”")
    assert page.url == server.url + "/?q=softmax"
    assert page.evaluate("history.length") == entries
    page.locator("#results ul.card-list li > a").first.click()
    expect(page.locator("h1#question")).to_be_visible()
    page.go_back()
    expect(page).to_have_url(server.url + "/?q=softmax")
    expect(page.get_by_role("searchbox")).to_have_value("softmax")
    expect(page.locator("#results h2")).to_contain_text("match “softmax”")
    expect(page.get_by_role("heading", level=1)).to_have_text("Practise for the ML interview")


def test_without_javascript_each_path_ends_where_the_script_would_take_it(
    browser: Browser, worker_url: str, tmp_path: Path, artifacts: Path
) -> None:
    """A fresh server, a browser without JavaScript: quick scan, reveal, quiz, demo, grade."""
    settings = Settings(data_dir=tmp_path / "data", reload_content=False, worker_url=worker_url)
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    with LiveServer(settings) as live:
        # Quick scan: the page runs its live numbers itself, by reloading once.
        page.goto(live.url + "/cards/attention-kv-cache-quantization?view=scan")
        expect(page.locator(".badge-pending")).to_have_count(1)  # for a moment
        expect(page).to_have_url(re.compile(r"run=1$"), timeout=30_000)
        expect(page.locator("span.live .badge").first).to_contain_text("checked")
        expect(page.locator(".badge-pending")).to_have_count(0)

        # The hint offers no key that does nothing.
        page.goto(live.url + f"/cards/{FIRST_CARD}")
        hint = page.locator("#answer-hint")
        expect(hint).to_have_text("Say it out loud or type it, then reveal.", use_inner_text=True)
        page.get_by_label("Your answer").fill("divide by root d_k")
        page.get_by_role("button", name="Reveal answer").click()
        expect(page.locator(".your-answer .typed")).to_have_text("divide by root d_k")
        expect(page.locator(".badge-pending")).to_have_count(0)  # every number was run
        expect(page.locator("span.live .badge").first).to_contain_text("checked")
        expect(page.locator(".demo-status")).to_have_count(0)
        expect(page.locator("figure.demo table.demo-numbers").first).to_be_visible()

        # The quiz answers in place: still revealed, scrolled to the result.
        page.locator("#multiple-choice input[type=radio]").first.check()
        page.get_by_role("button", name="Check my choice").click()
        expect(page).to_have_url(re.compile(r"#choice-result$"))
        notice = page.locator("#choice-result .notice")
        expect(notice).to_be_in_viewport()
        expect(page.locator(".your-answer .typed")).to_have_text("divide by root d_k")
        page.screenshot(path=artifacts / "nojs-choice-phone.png")

        # A demo's Run opens its page, with a way back to the card.
        demo = page.locator("figure.demo").first
        demo.get_by_role("button", name="Run").click()
        expect(page.locator("table.demo-numbers")).to_be_visible()
        page.get_by_role("link", name="Back to the card").click()
        expect(page).to_have_url(live.url + f"/cards/{FIRST_CARD}")

        # Grading says what it recorded, as the htmx swap does.
        page.goto(live.url + "/review")
        page.get_by_role("button", name="Reveal answer").click()
        page.get_by_role("button", name="Good").click()
        expect(page.locator("#review-notice")).to_contain_text("Recorded Good for")
        page.screenshot(path=artifacts / "nojs-graded-phone.png")
    context.close()


def test_demo_fields_say_what_is_wrong_and_charts_read_on_a_phone(
    page: Page, server: LiveServer, artifacts: Path
) -> None:
    page.set_viewport_size(PHONE)
    page.goto(server.url + f"/cards/{FIRST_CARD}")
    reveal_everything(page)
    demo = page.locator("figure.demo").first
    numbers = demo.locator("table.demo-numbers")
    expect(numbers).to_be_visible()

    # Out of range: nothing is sent; the field says why, the old numbers say they are old.
    d_k = demo.get_by_label("d_k", exact=True)
    d_k.fill("5000")
    d_k.dispatch_event("change")
    hint = demo.locator(f"#{d_k.get_attribute('id')}-hint")
    expect(hint).to_have_text("5000 is too large; allowed: an integer between 1 and 4096.")
    expect(d_k).to_have_attribute("aria-invalid", "true")
    expect(demo.locator(".stale-note")).to_contain_text("Not run")
    demo.scroll_into_view_if_needed()
    demo.screenshot(path=artifacts / "demo-out-of-range-phone.png")
    d_k.fill("64")
    d_k.dispatch_event("change")
    expect(hint).to_have_text("an integer between 1 and 4096")
    expect(demo.locator(".stale-note")).to_have_count(0)

    # Too costly for the worker: said at the field the worker names, in demo words.
    samples = demo.get_by_label("Samples")
    d_k.fill("4096")
    samples.fill("200000")
    samples.dispatch_event("change")
    refusal = demo.locator(".demo-error")
    expect(refusal).to_contain_text("Not run with these settings:", timeout=30_000)
    expect(refusal).not_to_contain_text("Live check unavailable")
    expect(refusal).not_to_contain_text("card's text")
    samples_hint = demo.locator(f"#{samples.get_attribute('id')}-hint")
    expect(samples_hint).to_contain_text("lower samples to")
    expect(samples).to_have_attribute("aria-invalid", "true")
    demo.screenshot(path=artifacts / "demo-too-costly-phone.png")
    samples.fill("20000")
    d_k.fill("128")
    d_k.dispatch_event("change")
    expect(numbers).to_be_visible(timeout=30_000)

    # Series that share both axes are one chart, with a legend; its text is readable.
    charts = demo.locator("svg.chart")
    expect(charts).to_have_count(1)
    expect(demo.locator(".chart-legend li")).to_have_count(2)
    heights = charts.first.evaluate(
        "svg => [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize)"
        " * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width)"
    )
    assert min(heights) >= 11.5, heights
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()

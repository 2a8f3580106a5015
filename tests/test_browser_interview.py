"""A mock interview in a real Chromium: a whole round typed, reloaded, graded and reported.

The "harder" mix leaves one of the two test cards, with two follow-ups, so a
15-minute round asks three questions. axe-core audits every page of the round at desktop and phone
width; screenshots land in test-artifacts/ (docs/interview.md uses some).
"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from app.settings import Settings
from tests.cardtext import GOOD_CARD, OTHER_CARD
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    """The app on the two test cards and an empty database."""
    deck = tmp_path / "content" / "testdeck"
    deck.mkdir(parents=True)
    (deck / "scaling.md").write_text(GOOD_CARD)
    (deck / "other.md").write_text(OTHER_CARD)  # easy: the "harder" mix leaves it out
    settings = Settings(
        content_dir=tmp_path / "content", data_dir=tmp_path / "data", reload_content=False
    )
    with LiveServer(settings) as live:
        yield live


def audit(page: Page, artifacts: Path, name: str) -> None:
    """axe-clean, no sideways scrolling, and a screenshot, at desktop then phone width."""
    for viewport, width in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(viewport)
        results = Axe().run(page)
        assert results.violations_count == 0, (name, width, results.generate_report())
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} at {width} scrolls sideways by {overflow}px"
        page.screenshot(path=artifacts / f"interview-{name}-{width}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def saved(page: Page) -> None:
    """Wait for the answer box's save (htmx, a second after typing stops)."""
    expect(page.locator("#save-status")).to_contain_text(re.compile(r"Saved at \d\d:\d\d:\d\d"))


def test_a_full_round_typed_reloaded_graded_and_reported(
    page: Page, server: LiveServer, artifacts: Path
) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/interview")
    audit(page, artifacts, "start")
    page.get_by_label("Harder: medium and hard").check()  # one card: three questions
    page.get_by_role("button", name="Start the round").click()

    # Question 1: typed, saved while typing, and still there after a reload.
    box = page.get_by_label("Your answer")
    expect(box).to_be_focused()
    expect(page.locator(".interview-progress")).to_have_text("Question 1 of up to 3")
    page.keyboard.type("Divide by sqrt(d_k): the dot product has variance d_k.")
    saved(page)
    asked = page.locator("[data-since]").get_attribute("data-since")
    expect(page.locator("[data-since]")).not_to_have_text("0:00", timeout=3_000)  # it ticks
    audit(page, artifacts, "question")
    page.reload()
    expect(box).to_have_value("Divide by sqrt(d_k): the dot product has variance d_k.")
    assert page.locator("[data-since]").get_attribute("data-since") == asked  # same clock
    page.get_by_role("button", name="Next question").click()

    # Question 2, a follow-up: a reload mid-answer loses nothing either.
    expect(page.locator(".context")).to_contain_text("Follow-up to:")
    expect(page.locator("#interview-question")).to_have_text("Why the square root?")
    expect(box).to_have_value("")
    box.press_sequentially("The standard deviation")
    saved(page)
    page.reload()
    expect(box).to_have_value("The standard deviation")
    box.press("End")
    box.press_sequentially(" grows as the square root.")
    page.get_by_role("button", name="Next question").click()  # saves the rest too

    # Question 3: the last, so its button finishes the round.
    expect(page.locator("#interview-question")).to_have_text("What does FlashAttention do?")
    box.press_sequentially("Scales inside each block.")
    page.get_by_role("button", name="Finish and grade").click()

    # Grading: each answer beside the model answer, with the checklists.
    expect(page.get_by_role("heading", level=1)).to_have_text("Grade your round")
    answers = page.locator(".your-answer .typed")
    expect(answers).to_have_text(
        [
            "Divide by sqrt(d_k): the dot product has variance d_k.",
            "The standard deviation grows as the square root.",
            "Scales inside each block.",
        ]
    )
    first, second, third = page.locator("article.interview-graded").all()
    first.get_by_label("Divide by").check()
    first.get_by_label("The dot product's variance grows with").check()
    second.get_by_label("Most of it").check()
    third.get_by_label("All of it").check()
    third.get_by_label("Saying it is tuned").check()
    audit(page, artifacts, "grading")
    other = page.context.new_page()  # the same form in a second tab, sent after this one
    other.goto(page.url)
    page.get_by_role("button", name="Record the grades and see the report").click()

    # The report says what was ticked: 2 of 3 points (67), most (67), all less a red flag (75).
    expect(page.get_by_role("heading", level=1)).to_have_text("Round report")
    expect(page.locator("#round-score")).to_have_text("70%")
    expect(page.locator(".interview-scores tbody td.score")).to_have_text(["67%", "67%", "75%"])
    expect(page.locator(".interview-detail .missed")).to_have_count(1)
    expect(page.locator(".interview-detail .missed")).to_contain_text(
        "Unscaled scores saturate the softmax"
    )
    expect(page.locator("#missed-heading + p + ol li")).to_contain_text(
        ["Unscaled scores saturate the softmax"]
    )
    expect(page.locator("#flags-heading + ul")).to_contain_text("Saying it is tuned")
    expect(page.locator(".practise-next a")).to_have_text(["The scaling factor"])
    audit(page, artifacts, "report")

    # The review log holds one graded review per item asked, with what was typed.
    exported = page.request.get(server.url + "/progress").json()
    assert [
        (r["card_id"], r["follow_up"], r["rating"], r["practice"]) for r in exported["reviews"]
    ] == [
        ("test-scaling", "", 2, False),
        ("test-scaling", "why-sqrt", 2, False),
        ("test-scaling", "flash", 2, False),
    ]
    assert [r["answer"] for r in exported["reviews"]][1] == (
        "The standard deviation grows as the square root."
    )
    assert [r["score"] for r in exported["interviews"]] == [70]

    # The same round graded again from the other tab counts nothing twice.
    other.locator("article.interview-graded").nth(1).get_by_label("All of it").check()
    other.locator("article.interview-graded").nth(2).get_by_label("All of it").check()
    other.get_by_role("button", name="Record the grades and see the report").click()
    expect(other.locator(".notice")).to_contain_text("graded already")
    expect(other.locator("#round-score")).to_have_text("70%")
    assert len(page.request.get(server.url + "/progress").json()["reviews"]) == 3
    other.close()

    page.goto(server.url + "/stats")
    expect(page.locator("#interviews-desc")).to_contain_text("the latest scored 70%")
    page.locator("#interviews-heading").scroll_into_view_if_needed()
    audit(page, artifacts, "stats")


def test_a_round_without_javascript(browser: Browser, server: LiveServer, artifacts: Path) -> None:
    """Every step is a plain form: Save keeps the answer, the times are on each page."""
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(server.url + "/interview")
        page.get_by_label("30 minutes").check()
        page.get_by_label("Harder: medium and hard").check()
        page.get_by_role("button", name="Start the round").click()
        expect(page.locator("[data-until]")).to_have_text(re.compile(r"^(30:00|29:5\d)$"))
        page.get_by_label("Your answer").fill("typed without scripts")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator("#save-status")).to_contain_text("Saved at")
        expect(page.get_by_label("Your answer")).to_have_value("typed without scripts")
        page.screenshot(path=artifacts / "interview-question-no-js-phone.png", full_page=True)
        page.get_by_role("button", name="End the round now").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Grade your round")
        expect(page.locator("article.interview-graded")).to_have_count(1)
        page.get_by_label("Unscaled scores saturate the softmax").check()
        page.get_by_role("button", name="Record the grades and see the report").click()
        expect(page.locator("#round-score")).to_have_text("33%")
    finally:
        context.close()

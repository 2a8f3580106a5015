"""Review and stats in a real Chromium: a keyboard-only session, then the stats it leaves.

Screenshots land in test-artifacts/ for a person to look at; axe-core audits
the review page (question and revealed) and the stats page at desktop and
phone width, once after a short session and once with a year of history.
"""

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Locator, Page, expect

from app.settings import Settings
from tests.cardtext import GOOD_CARD, OTHER_CARD
from tests.conftest import LiveServer
from tests.layout import no_horizontal_scroll

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _content(root: Path) -> Path:
    deck = root / "testdeck"
    deck.mkdir(parents=True)
    (deck / "scaling.md").write_text(GOOD_CARD)
    (deck / "other.md").write_text(OTHER_CARD)
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The app on the two test cards and an empty database."""
    root = tmp_path_factory.mktemp("review")
    settings = Settings(
        content_dir=_content(root / "content"), data_dir=root / "data", reload_content=False
    )
    with LiveServer(settings) as live:
        yield live


def a_year_of_history(path: Path) -> Path:
    """An export with a year of reviews and choices, most days, to draw full charts."""
    rng = random.Random(7)
    now = datetime.now(UTC)
    items = ["test-other", "test-other/why-exp", "test-scaling", "test-scaling/why-sqrt"]
    reviews, choices = [], []
    for back in range(365, 0, -1):
        if rng.random() < 0.3:
            continue
        day = now - timedelta(days=back)
        for n in range(rng.randint(1, 12)):
            card, _, follow_up = rng.choice(items).partition("/")
            reviews.append(
                {
                    "uid": f"{back:04d}{n:04d}".ljust(32, "0"),
                    "card_id": card,
                    "follow_up": follow_up,
                    "rating": rng.choices([1, 2, 3, 4], [2, 2, 5, 1])[0],
                    "reviewed_at": (day + timedelta(minutes=n)).isoformat(),
                }
            )
        if rng.random() < 0.4:
            choices.append(
                {
                    "uid": f"c{back:04d}".ljust(32, "0"),
                    "card_id": "test-scaling",
                    "choice": "b",
                    "correct": rng.random() < 0.7,
                    "attempted_at": day.isoformat(),
                }
            )
    reviews.append(
        {  # a card since removed from the content
            "uid": "f" * 32,
            "card_id": "retired-card",
            "rating": 3,
            "reviewed_at": (now - timedelta(days=40)).isoformat(),
        }
    )
    path.write_text(
        json.dumps(
            {
                "format": "quizlab-progress",
                "version": 1,
                "reviews": reviews,
                "choices": choices,
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def seasoned_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The app on the test cards with a year of imported history."""
    from app.practice import progress
    from app.practice.activity import Learner
    from app.practice.scheduling import Scheduler
    from app.storage.database import Database

    root = tmp_path_factory.mktemp("seasoned")
    settings = Settings(
        content_dir=_content(root / "content"), data_dir=root / "data", reload_content=False
    )
    database = Database(settings.resolved_database_url)
    database.upgrade()
    learner = Learner(database.local_user_id, settings.zone)
    parsed = progress.parse(a_year_of_history(root / "history.json").read_text())
    with database.session() as session:
        progress.import_file(session, learner, parsed, scheduler=Scheduler())
    database.dispose()
    with LiveServer(settings) as live:
        yield live


def test_a_review_session_with_the_keyboard_only(
    page: Page, server: LiveServer, artifacts: Path
) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/review")
    page.evaluate("window.sameDocument = true")
    expected = ["What is softmax?", "Why exp?", "What do you divide QK⊤ by, and why?"]
    for n, question in enumerate(expected):
        box = page.get_by_label("Your answer")
        expect(box).to_be_focused()  # ready to type, on the first item and after each grade
        expect(page.locator("#review-question")).to_have_text(question)
        page.keyboard.type(f"answer number {n}")
        page.keyboard.press("Tab")
        expect(page.get_by_role("button", name="Reveal answer")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#your-answer-heading")).to_be_focused()
        expect(page.locator(".your-answer .typed")).to_have_text(f"answer number {n}")
        expect(page.locator("button.grade")).to_have_count(4)
        if n == 2:
            page.screenshot(path=artifacts / "review-session-revealed-desktop.png", full_page=True)
        page.keyboard.press(["3", "4", "1"][n])
        expect(page.locator("#review-notice")).to_contain_text(
            ["Recorded Good", "Recorded Easy", "Recorded Again"][n]
        )
    assert page.evaluate("window.sameDocument") is True  # no full page load in between
    page.screenshot(path=artifacts / "review-session-next-desktop.png", full_page=True)

    exported = page.request.get(server.url + "/progress").json()
    assert [(r["rating"], r["answer"]) for r in exported["reviews"]] == [
        (3, "answer number 0"),
        (4, "answer number 1"),
        (1, "answer number 2"),
    ]

    page.goto(server.url + "/stats")
    tiles = page.locator(".stat-tiles")
    expect(tiles).to_contain_text("1 day")
    expect(tiles).to_contain_text("3 answers")
    expect(page.locator("#recent-desc")).to_contain_text(
        "3 reviews in the last 30 days, 67% recalled"
    )
    page.screenshot(path=artifacts / "stats-after-session-desktop.png", full_page=True)


def test_a_double_click_on_a_grade_records_one_review(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/review?mode=practice")
    before = len(page.request.get(server.url + "/progress").json()["reviews"])
    page.get_by_role("button", name="Reveal answer").click()
    page.locator("button.grade-3").dblclick()
    expect(page.locator("#review-notice")).to_contain_text("Recorded Good")
    page.wait_for_load_state("networkidle")
    after = len(page.request.get(server.url + "/progress").json()["reviews"])
    assert after == before + 1


# Presses a key in the same task that the grade buttons appear in: the
# fastest a learner could be, and faster than a 20 ms settle delay.
PRESS_WHEN_GRADES_APPEAR = """key => {
  new MutationObserver((changes, observer) => {
    if (!document.querySelector("button.grade")) return;
    observer.disconnect();
    document.body.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
  }).observe(document.body, {childList: true, subtree: true});
}"""


def test_a_grade_key_pressed_as_the_buttons_appear_is_recorded_in_place(
    page: Page, server: LiveServer
) -> None:
    """No race: a key pressed the moment the grade buttons appear goes through htmx."""
    page.goto(server.url + "/review?mode=practice")
    page.evaluate("window.sameDocument = true")
    for key, grade in [("3", "Good"), ("1", "Again"), ("4", "Easy")]:
        page.evaluate(PRESS_WHEN_GRADES_APPEAR, key)
        page.get_by_role("button", name="Reveal answer").click()
        expect(page.locator("#review-notice")).to_contain_text(f"Recorded {grade}")
    assert page.evaluate("window.sameDocument") is True  # no plain form post, no reload


def on_screen(button: Locator) -> bool:
    """Whether a button is inside the viewport and not covered: tappable without a scroll."""
    return bool(
        button.evaluate(
            """b => {
              const r = b.getBoundingClientRect();
              if (r.top < 0 || r.bottom > innerHeight) return false;
              return b.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
            }"""
        )
    )


def test_grade_buttons_stay_on_a_phone_screen(
    browser: Browser, server: LiveServer, artifacts: Path
) -> None:
    """After Reveal the grades are tappable without scrolling; a touch screen shows no key hints."""
    phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = phone.new_page()
    page.goto(server.url + "/review?mode=practice")
    expect(page.locator("#review-hint")).to_have_text(
        "Type it or say it out loud, then reveal.", use_inner_text=True
    )
    # A long answer: the revealed page is taller than the screen.
    page.get_by_label("Your answer").fill("\n".join(f"point {n}" for n in range(40)))
    page.get_by_role("button", name="Reveal answer").tap()
    grades = page.locator("button.grade")
    expect(grades).to_have_count(4)
    for scroll in ["0", "document.body.scrollHeight / 2", "document.body.scrollHeight"]:
        page.evaluate(f"window.scrollTo(0, {scroll})")
        for button in grades.all():
            assert on_screen(button), (scroll, button.inner_text())
    expect(page.locator(".key-hint").first).to_be_hidden()
    expect(page.locator(".grade-hint")).not_to_contain_text("Keys", use_inner_text=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "review-revealed-touch-phone.png")
    grades.nth(2).tap()
    expect(page.locator("#review-notice")).to_contain_text("Recorded Good")
    phone.close()

    page = browser.new_page(viewport=DESKTOP)  # a mouse and keys: the hints are there
    page.goto(server.url + "/review?mode=practice")
    page.get_by_role("button", name="Reveal answer").click()
    expect(page.locator(".grade-hint")).to_contain_text("Keys 1–4 grade")
    page.close()


def audit(page: Page, label: str, artifacts: Path, name: str) -> None:
    results = Axe().run(page)
    assert results.violations_count == 0, (label, results.generate_report())
    no_horizontal_scroll(page)
    page.screenshot(path=artifacts / f"{label}-{name}.png", full_page=True)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_review_and_stats_have_no_accessibility_violations(
    page: Page, seasoned_server: LiveServer, artifacts: Path, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    name = "desktop" if viewport is DESKTOP else "phone"
    page.goto(seasoned_server.url + "/review")
    expect(page.locator("#review-question")).to_be_visible()
    audit(page, "review", artifacts, name)
    page.get_by_role("button", name="Reveal answer").click()
    expect(page.locator("button.grade")).to_have_count(4)
    audit(page, "review-revealed", artifacts, name)

    page.goto(seasoned_server.url + "/stats")
    expect(page.locator("svg.heatmap rect")).not_to_have_count(0)
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    audit(page, "stats", artifacts, name)
    if viewport is PHONE:
        # The year scrolls sideways inside its own box, starting at today.
        box = page.locator(".chart-scroll")
        assert box.evaluate("b => b.scrollLeft + b.clientWidth >= b.scrollWidth - 1")

    page.goto(seasoned_server.url + "/review?mode=practice")
    audit(page, "practice", artifacts, name)


def test_nothing_due_page_is_accessible(page: Page, tmp_path: Path, artifacts: Path) -> None:
    settings = Settings(
        content_dir=_content(tmp_path / "content"),
        data_dir=tmp_path / "data",
        reload_content=False,
        new_items_per_day=0,
    )
    with LiveServer(settings) as live:
        for viewport, name in [(DESKTOP, "desktop"), (PHONE, "phone")]:
            page.set_viewport_size(viewport)
            page.goto(live.url + "/review")
            expect(page.locator(".review-empty h2")).to_have_text("Nothing is due")
            audit(page, "review-nothing-due", artifacts, name)


def test_importing_a_progress_file_on_the_stats_page(
    page: Page, tmp_path: Path, artifacts: Path
) -> None:
    """A learner moving to another Quizlab picks the file they downloaded; the stats fill in."""
    settings = Settings(
        content_dir=_content(tmp_path / "content"),
        data_dir=tmp_path / "data",
        reload_content=False,
    )
    history = a_year_of_history(tmp_path / "quizlab-progress.json")
    sent = json.loads(history.read_text())
    with LiveServer(settings) as live:
        page.goto(live.url + "/stats")
        empty = page.locator(".stat-tiles").inner_text()
        # The Import button sits level with its file picker.
        picker = page.get_by_label("Import a progress file").bounding_box()
        button = page.get_by_role("button", name="Import", exact=True).bounding_box()
        assert picker is not None and button is not None
        middle = [box["y"] + box["height"] / 2 for box in (picker, button)]
        assert abs(middle[0] - middle[1]) <= 2, middle
        page.get_by_label("Import a progress file").set_input_files(history)
        page.get_by_role("button", name="Import", exact=True).click()
        expect(page.locator("#import-message")).to_have_text(
            f"quizlab-progress.json: {len(sent['reviews'])} review(s) and "
            f"{len(sent['choices'])} multiple-choice attempt(s) added; 0 already there."
        )
        expect(page.locator(".stat-tiles")).not_to_have_text(empty)
        for viewport, name in [(DESKTOP, "desktop"), (PHONE, "phone")]:
            page.set_viewport_size(viewport)
            page.locator("#import-message").scroll_into_view_if_needed()
            audit(page, "stats-imported", artifacts, name)

        # A file that is not an export changes nothing and says why, next to the form.
        history.write_text("[]")
        page.get_by_label("Import a progress file").set_input_files(history)
        page.get_by_role("button", name="Import", exact=True).click()
        expect(page.locator("#import-message")).to_have_text(
            'quizlab-progress.json: not a Quizlab progress export: expected "format": '
            '"quizlab-progress". Nothing was imported.'
        )
        exported = page.request.get(live.url + "/progress").json()
        assert len(exported["reviews"]) == len(sent["reviews"])

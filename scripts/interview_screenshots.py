"""Take the screenshots in docs/interview.md: a round on the bundled cards, desktop and phone.

    PYTHONPATH=. .venv/bin/python scripts/interview_screenshots.py

Six earlier rounds are recorded first (through app.practice.interview, at
past times), so the stats chart has a history to draw. Needs Chromium
(Debian's, as the browser tests use).
"""

import random
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from app.content.library import Library
from app.practice import interview
from app.practice.activity import Learner
from app.practice.scheduling import Scheduler
from app.settings import PROJECT_ROOT, Settings
from app.storage.database import Database
from tests.conftest import LiveServer

DOCS = PROJECT_ROOT / "docs"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
ANSWER = (
    "Divide by sqrt(d_k), the per-head key size: 128 in Llama 3 70B. A dot product of "
    "d_k unit-variance terms has variance d_k, so without it the softmax saturates."
)


def history(settings: Settings) -> None:
    """Six graded rounds over the past weeks, each a little better than the last."""
    database = Database(settings.resolved_database_url)
    database.upgrade()
    learner = Learner(database.local_user_id, settings.zone)
    snapshot = Library(settings.content_dir).load()
    rng = random.Random(17)
    wanted = interview.Request(decks=(), weakest=False, mix="mixed", minutes=15)
    try:
        for n in range(6):
            at = datetime.now(UTC) - timedelta(days=3 * (6 - n), hours=2)
            with database.session() as session:
                uid = interview.start(session, learner, snapshot, wanted, now=at)
                found = interview.load(session, learner, snapshot, uid)
                for question in found.questions:
                    at += timedelta(minutes=question.minutes)
                    interview.advance(
                        session, learner, snapshot, uid, position=question.position,
                        text="…", now=at,
                    )  # fmt: skip
                    found = interview.load(session, learner, snapshot, uid)
                    if found.state != "answering":
                        break
                marks = {}
                for question in interview.gradable(found):
                    assert question.item is not None
                    points = len(question.item.card.key_points)
                    share = min(1.0, 0.3 + 0.12 * n + rng.random() * 0.2)
                    marks[question.position] = interview.Marks(
                        points=frozenset(range(round(points * share))),
                        coverage=min(3, round(3 * share)),
                    )
                interview.grade_round(
                    session, learner, snapshot, uid, marks, scheduler=Scheduler(), now=at
                )
    finally:
        database.dispose()


def shoot(page: Page, name: str, *, full: bool = False) -> None:
    path = DOCS / f"{name}.png"
    page.screenshot(path=path, full_page=full)
    print(path)


def main() -> None:
    root = Path(tempfile.mkdtemp())
    settings = Settings(data_dir=root / "data", reload_content=False)
    history(settings)
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with LiveServer(settings) as live, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live.url + "/interview")
        shoot(page, "interview-start")
        page.get_by_role("button", name="Start the round").click()
        page.get_by_label("Your answer").press_sequentially(ANSWER[:90])
        expect(page.locator("#save-status")).to_contain_text("Saved at")
        page.wait_for_timeout(4_000)  # let the question clock show some time
        shoot(page, "interview-question")
        first = page.locator("#interview-question").inner_text()
        for _ in range(12):  # answer and move on until the grading page
            if page.get_by_role("heading", level=1).inner_text() == "Grade your round":
                break
            page.get_by_label("Your answer").fill(ANSWER)
            page.locator("button[value=next]").click()
        for question in page.locator("article.interview-graded").all():
            boxes = question.locator("input[name^=points]").all()
            for box in boxes[: max(1, len(boxes) - 2)]:
                box.check()
            radios = question.locator("input[name^=coverage]").all()
            if radios:
                radios[2].check()
        page.set_viewport_size(PHONE)
        checklist = page.locator("fieldset.checklist").first
        checklist.evaluate("element => element.scrollIntoView({block: 'center'})")
        shoot(page, "interview-grading-phone")
        page.get_by_role("button", name="Record the grades and see the report").click()
        page.set_viewport_size(DESKTOP)
        shoot(page, "interview-report", full=True)
        page.set_viewport_size(PHONE)
        page.goto(live.url + "/stats")
        page.locator("#interviews-heading").scroll_into_view_if_needed()
        shoot(page, "interview-stats-phone")
        browser.close()
    print("first question:", first)


if __name__ == "__main__":
    main()

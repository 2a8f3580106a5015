"""Live preview: a card page open in Chromium follows its file as the author saves."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from app.settings import Settings
from tests.cardtext import GOOD_CARD, line_of
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_card_page_refreshes_when_its_file_changes(
    page: Page, content_dir: Path, tmp_path: Path, artifacts: Path
) -> None:
    settings = Settings(
        content_dir=content_dir,
        data_dir=tmp_path / "data",
        reload_content=True,
        reload_interval=0.2,
    )
    card_file = content_dir / "testdeck" / "scaling.md"
    with LiveServer(settings) as server:
        page.goto(server.url + "/cards/test-scaling")
        page.get_by_label("Your answer").fill("my answer")
        page.get_by_role("button", name="Reveal answer").click()
        expect(page.locator("#tl-dr")).to_contain_text("the per-head key dimension")

        card_file.write_text(
            GOOD_CARD.replace("the per-head key dimension", "the key size of one head")
        )
        expect(page.locator("#tl-dr")).to_contain_text("the key size of one head", timeout=5000)
        # Still revealed, with the answer that was typed.
        expect(page.locator(".your-answer .typed")).to_have_text("my answer")

        broken = GOOD_CARD.replace("## Analogy", "## Analogies")
        card_file.write_text(broken)
        problem = page.locator(".problems li", has_text="unknown section 'Analogies'")
        expect(problem).to_be_visible(timeout=5000)
        line = line_of(broken, "## Analogies")
        expect(problem).to_contain_text(f"scaling.md:{line}: unknown section 'Analogies'")
        # The last good version is still what the page shows.
        expect(page.locator("#analogy")).to_contain_text("Averaging more dice.")
        page.screenshot(path=artifacts / "preview-problem.png", full_page=True)

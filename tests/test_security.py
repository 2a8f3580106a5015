"""Security headers, and card HTML that stays inert in a real browser."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page

from app.settings import Settings
from tests.cardtext import GOOD_CARD
from tests.conftest import LiveServer

# Each payload tries to run `window.__xss = 1` (or show a dialog) from a card.
XSS_PAYLOADS = [
    "<script>window.__xss = 1</script>",
    '<img src="x" onerror="window.__xss = 1">',
    "<svg><script>window.__xss = 1</script></svg>",
    '<svg onload="window.__xss = 1"></svg>',
    '<math><mtext><img src="x" onerror="window.__xss = 1"></mtext></math>',
    '<a href="javascript:window.__xss = 1" id="xss-link">click me</a>',
    "[click me](javascript:window.__xss=1)",
    '<iframe src="javascript:window.top.__xss = 1"></iframe>',
    '<div hx-get="/" hx-trigger="load" hx-on::after-request="window.__xss = 1">htmx</div>',
    '<details open ontoggle="window.__xss = 1"><summary>x</summary></details>',
    '<p style="background:url(javascript:window.__xss=1)">styled</p>',
    '<object data="javascript:window.__xss=1"></object>',
    '<form action="javascript:window.__xss=1"><button>go</button></form>',
    '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=1">',
    "<div>\n\n<script>window.__xss = 1</script>\n\n</div>",
]


def test_every_response_has_security_headers(client: TestClient) -> None:
    for url in ["/", "/cards/test-scaling", "/no-such-page", "/static/app.css"]:
        headers = client.get(url).headers
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
        assert "frame-ancestors 'none'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"


@pytest.mark.browser
def test_xss_payloads_in_cards_stay_inert(page: Page, content_dir: Path, tmp_path: Path) -> None:
    analogy = "Averaging more dice.\n\n" + "\n\n".join(XSS_PAYLOADS) + "\n"
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("Averaging more dice.\n", analogy)
    )
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    settings = Settings(content_dir=content_dir, data_dir=tmp_path / "data")
    with LiveServer(settings) as server:
        page.goto(server.url + "/cards/test-scaling")
        page.get_by_role("button", name="Reveal answer").click()
        page.wait_for_selector("#analogy")
        page.wait_for_load_state("networkidle")
        for link in page.locator("#analogy a").all():
            link.click(no_wait_after=True)
        page.wait_for_timeout(300)
        assert page.evaluate("window.__xss") is None
        assert page.evaluate("window.top.__xss") is None
        assert dialogs == []
        assert page.locator("#analogy script, #analogy iframe, #analogy object").count() == 0

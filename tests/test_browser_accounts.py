"""Accounts mode in a real Chromium: sign in, practise with htmx (CSRF header), sign out.

axe-core audits the sign-in page (plain and with an error) and the account
page at desktop and phone width; screenshots land in test-artifacts/.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from app.accounts import users as accounts
from app.settings import Settings
from app.storage.database import Database
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The accounts-mode app on the bundled content, with an admin `ada` and a learner `bob`."""
    data_dir = tmp_path_factory.mktemp("data")
    settings = Settings(data_dir=data_dir, reload_content=False, auth="accounts")
    database = Database(settings.resolved_database_url)
    database.upgrade()
    with database.session() as session:
        accounts.create_user(
            session, name="ada", password=PASSWORD, is_admin=True, now=accounts.now_utc()
        )
        accounts.create_user(session, name="bob", password=PASSWORD, now=accounts.now_utc())
    database.dispose()
    with LiveServer(settings) as live:
        yield live


def sign_in(page: Page, password: str = PASSWORD, name: str = "ada") -> None:
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_sign_in_practise_and_sign_out(page: Page, server: LiveServer, artifacts: Path) -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/cards/attention-scaling-factor")
    expect(page).to_have_url(server.url + "/login?next=%2Fcards%2Fattention-scaling-factor")
    sign_in(page, "not the password")
    expect(page.locator(".form-error")).to_have_text(
        "Wrong name or password: check both and try again."
    )
    sign_in(page)
    expect(page).to_have_url(server.url + "/cards/attention-scaling-factor")
    # htmx posts carry the token from the meta tag: the quiz answer is accepted.
    page.locator("#multiple-choice input[type=radio]").nth(1).check()
    page.get_by_role("button", name="Check my choice").click()
    expect(page.locator("#choice-result .notice")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    page.goto(server.url + "/stats")
    expect(page).to_have_url(server.url + "/login?next=%2Fstats")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_account_pages_have_no_accessibility_violations(
    page: Page, server: LiveServer, artifacts: Path, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    name = "desktop" if viewport is DESKTOP else "phone"
    axe = Axe()
    page.goto(server.url + "/login")
    for label in ("login", "login-error"):
        results = axe.run(page)
        assert results.violations_count == 0, (label, results.generate_report())
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{label} scrolls sideways by {overflow}px"
        page.screenshot(path=artifacts / f"{label}-{name}.png", full_page=True)
        sign_in(page, "not the password")
        expect(page.locator(".form-error")).to_be_visible()
    sign_in(page)
    page.goto(server.url + "/account")
    results = axe.run(page)
    assert results.violations_count == 0, ("account", results.generate_report())
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"account page scrolls sideways by {overflow}px"
    page.screenshot(path=artifacts / f"account-{name}.png", full_page=True)
    page.goto(server.url + "/admin/users")
    page.get_by_label("Name").fill("cy")
    page.get_by_role("button", name="Make an invite link").click()
    expect(page.locator("#invite-url")).to_contain_text("/invite/")
    results = axe.run(page)
    assert results.violations_count == 0, ("users", results.generate_report())
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"users page scrolls sideways by {overflow}px"
    page.screenshot(path=artifacts / f"users-{name}.png", full_page=True)


def test_a_cookie_copied_before_sign_out_is_signed_out_too(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/login")
    sign_in(page, name="bob")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    copied = page.context.cookies()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    page.context.clear_cookies()
    page.context.add_cookies(copied)  # as one who copied the cookie would
    page.goto(server.url + "/stats")
    expect(page).to_have_url(server.url + "/login?next=%2Fstats")


ATTACKER = "http://attacker.test/"
ATTACK_PAGE = """<!doctype html><title>Win a prize</title>
<form method="post" action="{target}"><input name="choice" value="a">
<button type="submit">Claim</button></form>"""


@pytest.mark.parametrize("target", ["/logout", "/cards/attention-scaling-factor/choice"])
def test_a_form_on_another_site_cannot_sign_the_visitor_out(
    page: Page, server: LiveServer, target: str
) -> None:
    page.goto(server.url + "/login")
    sign_in(page, name="bob")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.route(
        ATTACKER,
        lambda route: route.fulfill(
            content_type="text/html", body=ATTACK_PAGE.format(target=server.url + target)
        ),
    )
    page.goto(ATTACKER)
    page.get_by_role("button", name="Claim").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Not allowed")
    page.goto(server.url + "/account")
    expect(page.get_by_role("heading", level=1)).to_have_text("Account")
    page.get_by_role("button", name="Sign out", exact=True).click()

"""Accounts mode: sign in and out, passwords, admins, invites, and progress that is each user's own."""

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.accounts import users as accounts
from app.accounts.limits import LoginLimiter
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import Invite, LoginFailure, User
from app.web import create_app
from app.web.middleware.sessions import COOKIE
from tests.conftest import CSRFClient, all_at_once

PASSWORD = "correct horse battery"
HX = {"HX-Request": "true"}


@pytest.fixture
def accounts_settings(db_settings: Settings) -> Settings:
    """The test settings in accounts mode, on SQLite and on PostgreSQL."""
    return db_settings.model_copy(update={"auth": "accounts"})


@pytest.fixture
def site(accounts_settings: Settings) -> Iterator["Site"]:
    """An accounts-mode app with an admin `ada` and a learner `bob`."""
    app = create_app(accounts_settings)
    with CSRFClient(app) as first:
        database: Database = app.state.db
        with database.session() as session:
            accounts.create_user(
                session, name="ada", password=PASSWORD, is_admin=True, now=accounts.now_utc()
            )
            accounts.create_user(session, name="bob", password=PASSWORD, now=accounts.now_utc())
        yield Site(app, first)


class Site:
    """The app and a way to open more browsers (clients with their own cookies) on it."""

    def __init__(self, app: object, client: CSRFClient) -> None:
        self.app = app
        self.client = client

    def browser(self) -> CSRFClient:
        return CSRFClient(self.app)  # type: ignore[arg-type]

    def signed_in(self, name: str, password: str = PASSWORD) -> CSRFClient:
        browser = self.browser()
        response = browser.post(
            "/login", data={"name": name, "password": password}, follow_redirects=False
        )
        assert response.status_code == 303, response.text
        return browser


def error_of(html: str) -> str:
    found = BeautifulSoup(html, "html.parser").select_one(".form-error")
    return found.get_text(" ", strip=True) if found else ""


def choices_of(client: TestClient) -> list[tuple[str, str]]:
    return [(c["card_id"], c["choice"]) for c in client.get("/progress").json()["choices"]]


def test_mode_none_has_no_sign_in(client: TestClient) -> None:
    assert client.get("/login").status_code == 404
    assert client.get("/").status_code == 200
    assert "Sign out" not in client.get("/").text


def test_signed_out_pages_go_to_the_sign_in_page(site: Site) -> None:
    browser = site.browser()
    response = browser.get("/review?deck=testdeck", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Freview%3Fdeck%3Dtestdeck"
    assert browser.get("/healthz").status_code == 200
    assert browser.get("/login").status_code == 200
    # Not a page: 401, and htmx is told where to go.
    grade = browser.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=HX)
    assert grade.status_code == 401
    assert grade.headers["HX-Redirect"] == "/login"
    assert browser.get("/progress", follow_redirects=False).status_code == 303


def test_sign_in_returns_to_the_page_asked_for(site: Site) -> None:
    browser = site.browser()
    response = browser.post(
        "/login",
        data={"name": "Bob", "password": PASSWORD, "next": "/review"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/review"
    assert browser.get("/review").status_code == 200
    page = browser.get("/account").text
    assert "Signed in as" in page and "bob" in page


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil"])
def test_sign_in_never_redirects_off_site(site: Site, target: str) -> None:
    response = site.browser().post(
        "/login", data={"name": "bob", "password": PASSWORD, "next": target}, follow_redirects=False
    )
    assert response.headers["location"] == "/"


def test_session_cookie_is_httponly_lax_and_secure_over_https(site: Site) -> None:
    plain = site.browser().post(
        "/login", data={"name": "bob", "password": PASSWORD}, follow_redirects=False
    )
    cookie = plain.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    secure = CSRFClient(site.app, base_url="https://testserver")  # type: ignore[arg-type]
    response = secure.post(
        "/login", data={"name": "bob", "password": PASSWORD}, follow_redirects=False
    )
    cookie = response.headers["set-cookie"]
    assert "; Secure" in cookie
    # __Host-: the browser takes it only over HTTPS, for this host alone, with Path=/.
    assert cookie.startswith(f"__Host-{COOKIE}=") and "; Path=/;" in cookie
    assert "Domain" not in cookie
    assert secure.get("/account").status_code == 200


def test_unknown_name_and_wrong_password_get_the_same_answer(site: Site) -> None:
    browser = site.browser()

    def attempt(name: str, password: str) -> tuple[int, str, float]:
        start = time.perf_counter()
        response = browser.post("/login", data={"name": name, "password": password})
        return response.status_code, error_of(response.text), time.perf_counter() - start

    unknown = [attempt("nobody", "whatever password") for _ in range(2)]
    wrong = [attempt("ada", "wrong password!!") for _ in range(2)]
    assert {(s, m) for s, m, _ in unknown + wrong} == {
        (401, "Wrong name or password: check both and try again.")
    }
    # Similar timing: both verify an Argon2 hash and wait out the same floor.
    fastest_unknown = min(t for _, _, t in unknown)
    fastest_wrong = min(t for _, _, t in wrong)
    assert 0.5 < fastest_unknown / fastest_wrong < 2.0


def test_sign_in_is_rate_limited_per_account(site: Site) -> None:
    site.app.state.login_limiter = LoginLimiter(account_limit=3, address_limit=100)  # type: ignore[attr-defined]
    browser = site.browser()
    for _ in range(3):
        assert (
            browser.post("/login", data={"name": "bob", "password": "nope nope nope"}).status_code
            == 401
        )
    # Even the right password is refused now, with a message that says how long to wait.
    refused = browser.post("/login", data={"name": "bob", "password": PASSWORD})
    assert refused.status_code == 429
    assert error_of(refused.text) == (
        "Too many failed sign-ins for this name or from this address: wait 15 minutes and try again."
    )
    # Another account is not locked by bob's failures.
    assert site.signed_in("ada").get("/account").status_code == 200
    # Nor is bob, from his own device: guesses elsewhere cannot lock him out.
    elsewhere = CSRFClient(site.app, client=("203.0.113.7", 50000))  # type: ignore[arg-type]
    right = elsewhere.post(
        "/login", data={"name": "bob", "password": PASSWORD}, follow_redirects=False
    )
    assert right.status_code == 303, right.text


def test_a_name_is_locked_everywhere_only_after_many_addresses_fail(site: Site) -> None:
    """The trade-off: a guesser spread over many addresses meets a limit per name too."""
    site.app.state.login_limiter = LoginLimiter(account_limit=2, name_limit=4, address_limit=100)  # type: ignore[attr-defined]
    for n in range(2):
        guesser = CSRFClient(site.app, client=(f"198.51.100.{n}", 50000))  # type: ignore[arg-type]
        for _ in range(2):
            wrong = {"name": "bob", "password": "nope nope nope"}
            assert guesser.post("/login", data=wrong).status_code == 401
    refused = site.browser().post("/login", data={"name": "bob", "password": PASSWORD})
    assert refused.status_code == 429


def test_sign_in_is_rate_limited_per_address(site: Site) -> None:
    site.app.state.login_limiter = LoginLimiter(account_limit=100, address_limit=3)  # type: ignore[attr-defined]
    browser = site.browser()
    for name in ("x1", "x2", "x3"):
        browser.post("/login", data={"name": name, "password": "nope nope nope"})
    assert browser.post("/login", data={"name": "ada", "password": PASSWORD}).status_code == 429


def test_the_limiter_forgets_failures_after_the_window(database: Database) -> None:
    limiter = LoginLimiter(window=60, account_limit=2, address_limit=10)
    start = accounts.now_utc()

    def at(seconds: float) -> datetime:
        return start + timedelta(seconds=seconds)

    with database.session() as session:

        def wrong(name: str, address: str, seconds: float) -> float:
            """A wrong password, as the sign-in route records it; the wait it was given."""
            attempt = limiter.attempt(session, name=name, address=address, now=at(seconds))
            if attempt.wait == 0:
                limiter.failed(session, attempt)
            return attempt.wait

        assert wrong("a", "1", 0) == 0
        assert wrong("a", "1", 10) == 0
        # Two failures for "a": the next waits until the first leaves the window.
        assert wrong("a", "1", 20) == 40
        assert wrong("b", "1", 20) == 0
        # The refused attempt was not counted: the wait does not grow.
        assert wrong("a", "1", 30) == 30
        assert wrong("a", "1", 61) == 0
        # A success forgets the name's failures and is not a failure itself.
        limiter.succeeded(session, limiter.attempt(session, name="a", address="2", now=at(62)))
        assert wrong("a", "2", 63) == 0
        # Old rows are deleted as new attempts come in: c's three (name and
        # address, address, name) remain.
        wrong("c", "3", 200)
        assert session.scalar(select(func.count()).select_from(LoginFailure)) == 3


def test_replicas_share_the_sign_in_limit(site: Site, accounts_settings: Settings) -> None:
    """Failures counted by one web process lock the name on another on the same database."""
    limiter = LoginLimiter(account_limit=3, address_limit=100)
    site.app.state.login_limiter = limiter  # type: ignore[attr-defined]
    other = create_app(accounts_settings)
    other.state.login_limiter = limiter
    with CSRFClient(other) as elsewhere:
        browser = site.browser()
        for _ in range(3):
            wrong = {"name": "bob", "password": "nope nope nope"}
            assert browser.post("/login", data=wrong).status_code == 401
        right = elsewhere.post(
            "/login", data={"name": "bob", "password": PASSWORD}, follow_redirects=False
        )
        assert right.status_code == 429


def test_a_burst_of_guesses_checks_at_most_the_limit(database: Database) -> None:
    """Attempts are counted before the password is checked, so simultaneous
    guesses cannot all pass the limit while none has been counted yet."""
    limiter = LoginLimiter(account_limit=3, name_limit=3, address_limit=1000)

    def guess(number: int) -> bool:
        with database.session() as session:
            attempt = limiter.attempt(session, name="bob", address=f"10.0.0.{number}")
            return attempt.wait == 0

    allowed = all_at_once(12, guess)  # within the connection pool (15), four times the limit
    # At most the limit; possibly none, when every guess is counted before any is checked.
    assert allowed.count(True) <= 3
    # The refused ones were withdrawn: only the allowed ones still count against bob.
    with database.session() as session:
        counted = session.scalar(
            select(func.count()).select_from(LoginFailure).where(LoginFailure.scope == "name")  # type: ignore[arg-type]
        )
    assert counted == allowed.count(True)


def test_sign_ins_from_one_address_that_succeed_do_not_lock_it(database: Database) -> None:
    """A class behind one NAT: each success withdraws its attempt before the next counts.

    The route makes attempts a few at a time (app.accounts.passwords.gated), so
    a whole class signing in at once gets in: tests/test_signin_burst.py.
    """
    limiter = LoginLimiter(account_limit=5, address_limit=3)
    with database.session() as session:
        for number in range(12):
            attempt = limiter.attempt(session, name=f"learner{number}", address="10.0.0.1")
            assert attempt.wait == 0
            limiter.succeeded(session, attempt)


def replay(site: Site, cookie: str) -> CSRFClient:
    """Another browser holding a copy of ``cookie``, as one who stole it would."""
    browser = site.browser()
    browser.cookies.set(COOKIE, cookie)
    return browser


def test_a_cookie_kept_after_sign_out_reads_nothing(site: Site) -> None:
    """Sessions live on the server: signing out ends the cookie, copies included."""
    browser = site.signed_in("bob")
    kept = browser.cookies[COOKIE]
    assert replay(site, kept).get("/stats").status_code == 200
    assert browser.post("/logout", follow_redirects=False).status_code == 303
    for path in ("/stats", "/progress", "/account"):
        assert replay(site, kept).get(path, follow_redirects=False).status_code == 303


def test_sign_out_everywhere_ends_every_session_of_the_user(site: Site) -> None:
    here, elsewhere, ada = site.signed_in("bob"), site.signed_in("bob"), site.signed_in("ada")
    page = BeautifulSoup(here.get("/account").text, "html.parser")
    form = page.select_one("form#sign-out-everywhere")
    assert form is not None and form.get_text(" ", strip=True) == "Sign out everywhere"
    response = here.post(str(form["action"]), follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login"
    for browser in (here, elsewhere):
        assert browser.get("/account", follow_redirects=False).status_code == 303
    assert ada.get("/account").status_code == 200


def test_a_disabled_user_stays_signed_out_when_enabled_again(site: Site) -> None:
    admin, bob = site.signed_in("ada"), site.signed_in("bob")
    kept = bob.cookies[COOKIE]
    assert admin.post("/admin/users/bob/disabled", data={"disabled": "true"}).status_code == 200
    assert admin.post("/admin/users/bob/disabled", data={"disabled": "false"}).status_code == 200
    assert replay(site, kept).get("/account", follow_redirects=False).status_code == 303


def test_changing_the_password_signs_out_other_sessions(site: Site) -> None:
    here, elsewhere = site.signed_in("bob"), site.signed_in("bob")
    wrong = here.post(
        "/account/password",
        data={"current": "not it at all", "new": "a new password", "repeated": "a new password"},
    )
    assert wrong.status_code == 422
    assert error_of(wrong.text) == "The current password is wrong: nothing was changed."
    differ = here.post(
        "/account/password",
        data={"current": PASSWORD, "new": "a new password", "repeated": "another password"},
    )
    assert differ.status_code == 422
    assert "differ" in error_of(differ.text)
    changed = here.post(
        "/account/password",
        data={"current": PASSWORD, "new": "a new password", "repeated": "a new password"},
    )
    assert changed.status_code == 200
    assert here.get("/account").status_code == 200
    assert elsewhere.get("/account", follow_redirects=False).status_code == 303
    assert site.signed_in("bob", "a new password")


def test_an_admin_disables_and_enables_a_user(site: Site) -> None:
    admin, bob = site.signed_in("ada"), site.signed_in("bob")
    assert bob.get("/admin/users").status_code == 403
    assert bob.post("/admin/users/ada/disabled", data={"disabled": "true"}).status_code == 403
    assert admin.post("/admin/users/bob/disabled", data={"disabled": "true"}).status_code == 200
    assert bob.get("/review", follow_redirects=False).status_code == 303
    refused = site.browser().post("/login", data={"name": "bob", "password": PASSWORD})
    assert error_of(refused.text) == "Wrong name or password: check both and try again."
    assert admin.post("/admin/users/nobody/disabled", data={"disabled": "true"}).status_code == 404
    assert admin.post("/admin/users/ada/disabled", data={"disabled": "true"}).status_code == 409
    assert admin.post("/admin/users/bob/disabled", data={"disabled": "false"}).status_code == 200
    assert site.signed_in("bob")


def invite_path(admin: CSRFClient, name: str, **form: str) -> str:
    page = admin.post("/admin/invites", data={"name": name, **form})
    assert page.status_code == 201, page.text
    link = BeautifulSoup(page.text, "html.parser").select_one("#invite-url")
    assert link is not None
    return link.get_text().removeprefix("http://testserver")


def test_an_invite_link_works_once(site: Site) -> None:
    admin = site.signed_in("ada")
    path = invite_path(admin, "Cy ")  # kept as the name check writes it
    guest = site.browser()
    assert guest.get(path).status_code == 200
    short = guest.post(path, data={"password": "short", "repeated": "short"})
    assert short.status_code == 422
    made = guest.post(
        path,
        data={"name": "someone-else", "password": PASSWORD, "repeated": PASSWORD},
        follow_redirects=False,
    )
    assert made.status_code == 303
    assert "cy" in guest.get("/account").text  # the invite's name, not the form's
    assert site.signed_in("cy")
    assert site.browser().get(path).status_code == 404
    again = site.browser().post(path, data={"password": PASSWORD, "repeated": PASSWORD})
    assert again.status_code == 404


def test_the_invite_page_does_not_tell_which_names_exist(site: Site) -> None:
    """The admin picks the name: the person invited is never asked one, so never refused one."""
    admin = site.signed_in("ada")
    path = invite_path(admin, "cy")
    guest = site.browser()
    page = BeautifulSoup(guest.get(path).text, "html.parser")
    form = page.select_one("form.account-form")
    assert form is not None
    assert [field["name"] for field in form.select("input[name]")] == [
        "csrf_token",
        "password",
        "repeated",
    ]
    assert "cy" in page.select_one("main").get_text()  # type: ignore[union-attr]
    for name in ("bob", "ada", "nobody"):  # existing or not: the same answer
        refused = guest.post(path, data={"name": name, "password": "short", "repeated": "short"})
        assert refused.status_code == 422
        assert error_of(refused.text) == "A password has at least 10 characters."
    made = guest.post(
        path,
        data={"name": "bob", "password": PASSWORD, "repeated": PASSWORD},
        follow_redirects=False,
    )
    assert made.status_code == 303
    assert {user.name for user in accounts_of(site)} == {"ada", "bob", "cy"}


def accounts_of(site: Site) -> list[User]:
    with site.app.state.db.session() as session:  # type: ignore[attr-defined]
        return accounts.users(session)


def test_an_admin_is_told_when_a_name_cannot_be_invited(site: Site) -> None:
    admin = site.signed_in("ada")
    taken = admin.post("/admin/invites", data={"name": "bob"})
    assert taken.status_code == 409
    page = BeautifulSoup(taken.text, "html.parser")
    assert page.select_one("#invite-error").get_text() == (  # type: ignore[union-attr]
        "There is already a user called 'bob': pick another name."
    )
    assert page.select_one("#invite-name")["value"] == "bob"  # type: ignore[index]
    assert page.select_one("#invite-url") is None
    bad = admin.post("/admin/invites", data={"name": "no spaces"})
    assert bad.status_code == 422
    assert "2 to 40 characters" in error_of(bad.text)
    missing = admin.post("/admin/invites", data={})
    assert missing.status_code == 422
    assert site.signed_in("bob").post("/admin/invites", data={"name": "eve"}).status_code == 403


def test_a_new_invite_for_a_name_replaces_the_waiting_one(site: Site) -> None:
    admin = site.signed_in("ada")
    lost = invite_path(admin, "cy")
    kept = invite_path(admin, "cy")
    assert site.browser().get(lost).status_code == 404
    other = invite_path(admin, "dee")  # other names' invites are untouched
    assert site.browser().get(kept).status_code == 200
    assert site.browser().get(other).status_code == 200


def test_an_invite_whose_name_was_taken_since_says_so(site: Site) -> None:
    admin = site.signed_in("ada")
    path = invite_path(admin, "cy")
    with site.app.state.db.session() as session:  # type: ignore[attr-defined]
        accounts.create_user(session, name="cy", password=PASSWORD, now=accounts.now_utc())
    guest = site.browser()
    refused = guest.post(path, data={"password": PASSWORD, "repeated": PASSWORD})
    assert refused.status_code == 409
    assert error_of(refused.text) == (
        "The name 'cy' this invite was made for has been taken since: ask for a new invite."
    )


def test_an_invite_made_before_names_asks_for_a_new_one(site: Site) -> None:
    """Rows from before migration 0007 have no name: refused with a message, not a 500."""
    admin = site.signed_in("ada")
    path = invite_path(admin, "cy")
    with site.app.state.db.session() as session:  # type: ignore[attr-defined]
        session.execute(Invite.__table__.update().values(name=None))  # type: ignore[attr-defined]
        session.commit()
    for response in (
        site.browser().get(path),
        site.browser().post(path, data={"password": PASSWORD, "repeated": PASSWORD}),
    ):
        assert response.status_code == 404
        assert "made before invites named the person invited" in response.text


def test_two_invites_for_one_name_accepted_at_once_make_one_user(site: Site) -> None:
    """Two admins inviting 'cy' at the same moment: the unique name decides, the other gets 409."""
    admin = site.signed_in("ada")
    with site.app.state.db.session() as session:  # type: ignore[attr-defined]
        now = accounts.now_utc()
        ada = accounts.users(session)[0].id
        assert ada is not None
        first = accounts.create_invite(session, by=ada, name="cy", is_admin=False, now=now)
        second = accounts.create_invite(session, by=ada, name="cy", is_admin=False, now=now)
        # The second admin's check ran before the first invite existed: both still wait.
        waiting = Invite.__table__.update().values(expires_at=now + timedelta(days=1))  # type: ignore[attr-defined]
        session.execute(waiting)
        session.commit()
    paths = [f"/invite/{first}", f"/invite/{second}"]
    guests = [site.browser(), site.browser()]
    for guest in guests:
        guest.csrf_token()  # each has a session before the race starts

    def accept(n: int) -> tuple[int, str]:
        form = {"password": PASSWORD, "repeated": PASSWORD}
        response = guests[n].post(paths[n], data=form, follow_redirects=False)
        return response.status_code, error_of(response.text)

    answers = all_at_once(2, accept)
    assert sorted(answers) == [
        (303, ""),
        (409, "The name 'cy' this invite was made for has been taken since: ask for a new invite."),
    ]
    assert [user.name for user in accounts_of(site)].count("cy") == 1
    assert admin.get("/admin/users").status_code == 200


@pytest.mark.parametrize("name", ["bo\x00b", "\x00"])
def test_a_nul_in_a_sign_in_name_is_a_page_that_says_so(site: Site, name: str) -> None:
    response = site.browser().post("/login", data={"name": name, "password": PASSWORD})
    assert response.status_code == 422
    assert "NUL" in response.text
    admin = site.signed_in("ada")
    path = "/admin/users/" + name.replace("\x00", "%00") + "/disabled"
    refused = admin.post(path, data={"disabled": "true"})
    assert refused.status_code in (404, 422)


def test_invite_links_are_built_from_the_public_url_not_the_host_header(
    accounts_settings: Settings,
) -> None:
    settings = accounts_settings.model_copy(update={"public_url": "https://quiz.example.org/"})
    app = create_app(settings)
    with CSRFClient(app, base_url="http://evil.example") as admin:
        with app.state.db.session() as session:
            accounts.create_user(
                session, name="ada", password=PASSWORD, is_admin=True, now=accounts.now_utc()
            )
        admin.post("/login", data={"name": "ada", "password": PASSWORD})
        link = invite_path(admin, "cy")
    assert link.startswith("https://quiz.example.org/invite/")


def test_each_user_sees_only_their_own_progress(site: Site) -> None:
    ada, bob = site.signed_in("ada"), site.signed_in("bob")
    ada.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=HX)
    assert choices_of(ada) == [("test-scaling", "b")]
    assert choices_of(bob) == []
    bob.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=HX)
    assert choices_of(ada) == [("test-scaling", "b")]
    assert choices_of(bob) == [("test-scaling", "a")]


def test_a_review_token_of_another_user_is_not_found(site: Site) -> None:
    """Review forms name items by token; a token is only ever looked up in its user's rows."""
    ada, bob = site.signed_in("ada"), site.signed_in("bob")
    page = BeautifulSoup(ada.get("/review").text, "html.parser")
    form = {
        str(i["name"]): str(i.get("value", ""))
        for i in page.select("form.answer-form input[type=hidden]")
    }
    ada.post("/review/reveal", data=form, headers=HX)
    graded = ada.post("/review/grade", data={**form, "rating": "3"}, headers=HX)
    assert graded.status_code == 200
    # bob replays ada's form: recorded (if at all) as bob's own review, never touching ada's.
    bob.post("/review/grade", data={**form, "rating": "1"}, headers=HX)
    ada_reviews = ada.get("/progress").json()["reviews"]
    assert [r["rating"] for r in ada_reviews] == [3]
    assert all(r["rating"] != 3 for r in bob.get("/progress").json()["reviews"])


def review_form(client: CSRFClient, **params: str) -> dict[str, str]:
    page = BeautifulSoup(client.get("/review", params=params).text, "html.parser")
    return {
        str(i["name"]): str(i.get("value", ""))
        for i in page.select("form.answer-form input[type=hidden]")
    }


def test_a_practice_cursor_of_another_user_is_not_followed(site: Site) -> None:
    """The cursor names a row by id: only the learner's own rows are looked up."""
    ada, bob = site.signed_in("ada"), site.signed_in("bob")
    for who, rating in ((bob, "1"), (ada, "4")):  # bob's item is due in minutes, ada's in days
        graded = who.post("/review/grade", data={**review_form(who), "rating": rating}, headers=HX)
        assert graded.status_code == 200
    bobs_row = review_form(bob, mode="practice")["cursor"]
    adas_row = review_form(ada, mode="practice")["cursor"]
    assert bobs_row.startswith("r") and adas_row.startswith("r") and bobs_row != adas_row
    # Following ada's row, bob would start after her due date and skip his own item.
    assert review_form(bob, mode="practice", after=adas_row)["cursor"] == bobs_row


def test_practice_looks_up_no_row_by_its_id_alone() -> None:
    """``session.get(Model, id)`` names no user: every progress query must."""
    practice = Path(__file__).parent.parent / "app" / "practice"
    found = [
        f"{path.name}:{number}"
        for path in sorted(practice.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "session.get(" in line
    ]
    assert found == []


def quizlab(*args: str, data_dir: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QUIZLAB_DATA_DIR": str(data_dir)}
    env.pop("QUIZLAB_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_switching_to_accounts_gives_local_progress_to_the_first_admin(settings: Settings) -> None:
    with CSRFClient(create_app(settings)) as single:
        single.post("/cards/test-scaling/choice", data={"choice": "b"})
        assert choices_of(single) == [("test-scaling", "b")]
    added = quizlab(
        "user", "add", "ada", "--admin", data_dir=settings.data_dir, stdin=PASSWORD + "\n"
    )
    assert added.returncode == 0, added.stderr
    assert "created admin ada" in added.stderr
    assert "the local user's progress is now theirs" in added.stderr
    learner = quizlab("user", "add", "bob", data_dir=settings.data_dir, stdin=PASSWORD + "\n")
    assert learner.returncode == 0, learner.stderr
    exported = quizlab(
        "progress", "export", "-", "--user", "ada", data_dir=settings.data_dir, stdin=""
    )
    assert [c["choice"] for c in json.loads(exported.stdout)["choices"]] == ["b"]
    unknown = quizlab(
        "progress", "export", "-", "--user", "nobody", data_dir=settings.data_dir, stdin=""
    )
    assert unknown.returncode == 2
    assert "there is no user called 'nobody'" in unknown.stderr
    app = create_app(settings.model_copy(update={"auth": "accounts"}))
    with CSRFClient(app):
        site = Site(app, CSRFClient(app))
        assert choices_of(site.signed_in("ada")) == [("test-scaling", "b")]
        assert choices_of(site.signed_in("bob")) == []


@pytest.mark.parametrize(
    ("password", "why"),
    [
        ("qwertyuiop", "one of the most common passwords"),
        ("Password123", "one of the most common passwords"),
        ("aaaaaaaaaaaa", "one character repeated"),
    ],
)
def test_a_common_or_one_character_password_is_refused(site: Site, password: str, why: str) -> None:
    """ASVS 2.1.7: passwords are checked against a list of common ones."""
    here = site.signed_in("bob")
    response = here.post(
        "/account/password",
        data={"current": PASSWORD, "new": password, "repeated": password},
    )
    assert response.status_code == 422
    assert why in error_of(response.text)
    with pytest.raises(accounts.AccountError, match=why):
        accounts.check_password(password)


def test_user_add_refuses_a_bad_name_or_short_password(tmp_path: Path) -> None:
    short = quizlab("user", "add", "ada", data_dir=tmp_path, stdin="short\n")
    assert short.returncode == 2
    assert "at least 10 characters" in short.stderr
    bad = quizlab("user", "add", "Not OK!", data_dir=tmp_path, stdin=PASSWORD + "\n")
    assert bad.returncode == 2
    assert "A name is 2 to 40 characters" in bad.stderr


def test_passwords_are_stored_as_argon2_hashes(database: Database) -> None:
    with database.session() as session:
        user = accounts.create_user(session, name="ada", password=PASSWORD, now=accounts.now_utc())
        stored = session.get(User, user.id)
        assert stored is not None and stored.password_hash is not None
        assert stored.password_hash.startswith("$argon2id$")
        assert PASSWORD not in stored.password_hash

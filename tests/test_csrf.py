"""CSRF: a state-changing request without the session's token is refused and stores nothing."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from app.web.middleware import csrf
from app.web.middleware.sessions import new_token
from tests.conftest import csrf_token_of, start_session

HX = {"HX-Request": "true"}


@pytest.fixture
def bare(settings: Settings) -> TestClient:
    """A client that sends no token unless a test adds one: like a form on another site."""
    with TestClient(create_app(settings)) as client:
        start_session(client)  # as a visitor who once sent a form has
        yield client


def choices(client: TestClient) -> list[object]:
    recorded: list[object] = client.get("/progress").json()["choices"]
    return recorded


def page_token(html: str, selector: str = "meta[name=csrf-token]") -> str:
    tag = BeautifulSoup(html, "html.parser").select_one(selector)
    assert tag is not None, selector
    return str(tag.get("content") or tag.get("value"))


def error_message(html: str) -> str:
    """The message of the error page a refusal renders (the same page as any error)."""
    tag = BeautifulSoup(html, "html.parser").select_one("p.error-message")
    assert tag is not None, html
    return tag.get_text()


@pytest.mark.parametrize("headers", [{}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": ""}])
def test_a_post_without_the_right_token_is_refused(
    bare: TestClient, headers: dict[str, str]
) -> None:
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=headers)
    assert response.status_code == 403
    assert error_message(response.text) == csrf.MESSAGE
    assert choices(bare) == []


def test_a_form_field_with_another_sessions_token_is_refused(
    bare: TestClient, settings: Settings
) -> None:
    with TestClient(create_app(settings)) as other:
        other.get("/")
        stolen = csrf_token_of(other)
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b", "csrf_token": stolen})
    assert response.status_code == 403
    assert choices(bare) == []


def test_a_plain_form_sends_the_token_in_a_field(bare: TestClient) -> None:
    page = bare.get("/cards/test-scaling").text
    token = page_token(page, "form[action*='/choice'] input[name=csrf_token]")
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b", "csrf_token": token})
    assert response.status_code == 200
    assert len(choices(bare)) == 1


def test_htmx_sends_the_token_from_the_meta_tag_in_a_header(bare: TestClient) -> None:
    token = page_token(bare.get("/review").text)
    headers = {**HX, "X-CSRF-Token": token}
    response = bare.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=headers)
    assert response.status_code == 200
    assert len(choices(bare)) == 1


def test_a_post_with_no_session_at_all_is_refused(settings: Settings) -> None:
    with TestClient(create_app(settings)) as stranger:
        response = stranger.post("/cards/test-scaling/reveal", data={"csrf_token": "x" * 43})
        assert response.status_code == 403


def test_the_cached_card_page_carries_each_visitors_own_token(settings: Settings) -> None:
    app = create_app(settings)
    with TestClient(app) as first, TestClient(app) as second, TestClient(app) as new:
        tokens = [start_session(first), start_session(second)]
        pages = [first.get("/cards/test-scaling").text, second.get("/cards/test-scaling").text]
        again = first.get("/cards/test-scaling").text  # from the cache
        visitor = new.get("/cards/test-scaling").text  # no session yet: the visitor token
        visitor_token = page_token(visitor)
    assert len(set(tokens)) == 2 and visitor_token not in tokens
    for page, token in zip(
        [*pages, again, visitor], [*tokens, tokens[0], visitor_token], strict=True
    ):
        assert csrf.PLACEHOLDER not in page
        assert page_token(page) == token
        fields = BeautifulSoup(page, "html.parser").select("input[name=csrf_token]")
        assert fields and {f["value"] for f in fields} == {token}
    # The cache holds the placeholder, never a token.
    cached = b"".join(app.state.page_cache._pages.values())
    assert csrf.PLACEHOLDER.encode() in cached
    assert not any(token.encode() in cached for token in [*tokens, visitor_token])


def test_the_placeholder_is_as_long_as_a_token() -> None:
    assert len(csrf.PLACEHOLDER) == len(csrf.PLACEHOLDER.encode()) == len(new_token()) == 43


def test_pages_with_a_token_are_private_and_static_files_set_no_cookie(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        page = client.get("/cards/test-scaling")
        assert page.headers["cache-control"] == "private, no-cache"
        css = client.get("/static/app.css")
        assert css.headers["cache-control"].startswith("public")
        assert "set-cookie" not in css.headers


def upload_parts(bare: TestClient, **fields: tuple[str | None, bytes | str]) -> int:
    """POST the stats page's import form with these parts, in this order; its status."""
    return bare.post("/stats/import", files=fields).status_code


def test_an_upload_carries_the_token_as_its_first_part(bare: TestClient) -> None:
    token = page_token(bare.get("/stats").text, "form.import-form input[name=csrf_token]")
    empty_export = b'{"format": "quizlab-progress", "version": 1, "reviews": [], "choices": []}'
    exported = ("progress.json", empty_export)
    assert upload_parts(bare, csrf_token=(None, token), file=exported) == 200
    # No token, a forged one, or the right one after the file: refused before the route.
    assert upload_parts(bare, file=exported) == 403
    assert upload_parts(bare, csrf_token=(None, new_token()), file=exported) == 403
    assert upload_parts(bare, file=exported, csrf_token=(None, token)) == 403


def test_an_upload_over_the_limit_is_refused_unread(
    bare: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csrf, "MAX_UPLOAD_BYTES", 1_000_000)
    token = page_token(bare.get("/stats").text, "form.import-form input[name=csrf_token]")
    response = bare.post(
        "/stats/import",
        files={"csrf_token": (None, token), "file": ("big.json", b" " * 1_500_000)},
    )
    assert response.status_code == 413
    assert error_message(response.text) == (
        "This file is too large: at most 1 MB here. "
        "Import a larger one with `quizlab progress import` on the server."
    )


def test_a_refusal_never_sets_a_cookie(settings: Settings) -> None:
    """A cross-site form arrives without the cookie (SameSite=Lax): answering it with a
    fresh one would replace the visitor's own session, signing them out."""
    with TestClient(create_app(settings)) as stranger:
        for data in ({}, {"csrf_token": "x" * 43}):
            response = stranger.post("/cards/test-scaling/reveal", data=data)
            assert response.status_code == 403
            assert "set-cookie" not in response.headers


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://testserver.evil.example"},
        {"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"},
    ],
)
def test_a_post_from_another_site_is_refused_even_with_the_token(
    bare: TestClient, headers: dict[str, str]
) -> None:
    """Origin and Sec-Fetch-Site: a second layer, should the token ever leak."""
    sent = {**headers, "X-CSRF-Token": csrf_token_of(bare)}
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=sent)
    assert response.status_code == 403
    assert error_message(response.text) == csrf.CROSS_SITE
    assert choices(bare) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"},
        {"Sec-Fetch-Site": "none"},  # typed in or bookmarked: no page sent it
        {"Origin": "http://testserver"},
        {},  # an old browser or a script: the token alone decides
    ],
)
def test_a_post_from_this_site_passes(bare: TestClient, headers: dict[str, str]) -> None:
    sent = {**headers, "X-CSRF-Token": csrf_token_of(bare)}
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=sent)
    assert response.status_code == 200


# A visitor who has only read pages has no session: no cookie until their first form.

PAGES = ["/", "/cards/test-scaling", "/decks/testdeck", "/review", "/stats", "/interview"]


def test_reading_pages_sets_no_cookie_and_every_page_carries_the_visitor_token(
    settings: Settings,
) -> None:
    with TestClient(create_app(settings)) as first, TestClient(create_app(settings)) as other:
        tokens = set()
        for path in PAGES:
            for client in (first, other):
                for method in (client.get, client.head):
                    response = method(path)
                    assert response.status_code == 200, path
                    assert "set-cookie" not in response.headers, path
                tokens.add(page_token(client.get(path).text))
        assert not first.cookies and not other.cookies
    assert len(tokens) == 1  # the day's visitor token, the same for everyone
    assert len(tokens.pop()) == len(csrf.PLACEHOLDER)


@pytest.mark.parametrize(
    "vouch", [{"Sec-Fetch-Site": "same-origin"}, {"Origin": "http://testserver"}]
)
def test_a_visitors_first_form_starts_a_session_with_a_token_of_its_own(
    settings: Settings, vouch: dict[str, str]
) -> None:
    with TestClient(create_app(settings)) as visitor:
        shared = page_token(visitor.get("/cards/test-scaling").text)
        sent = {**vouch, **HX, "X-CSRF-Token": shared}
        response = visitor.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=sent)
        assert response.status_code == 200
        assert "set-cookie" in response.headers
        own = response.headers["x-csrf-token"]
        assert own == csrf_token_of(visitor) != shared
        fields = BeautifulSoup(response.text, "html.parser").select("input[name=csrf_token]")
        assert {f["value"] for f in fields} <= {own}
        assert len(choices(visitor)) == 1
        # From now on only the session's own token is taken, and it stays the same.
        again = visitor.post(
            "/cards/test-scaling/choice", data={"choice": "b"}, headers={**sent, **HX}
        )
        assert again.status_code == 403
        mine = {**HX, "X-CSRF-Token": own}
        kept = visitor.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=mine)
        assert kept.status_code == 200 and kept.headers.get("x-csrf-token", own) == own
        assert len(choices(visitor)) == 2


def test_a_visitor_token_without_the_browsers_word_is_refused_and_stores_nothing(
    settings: Settings,
) -> None:
    """The visitor token is no secret: anyone can read it from a page. A form that carries it
    must also come, by the browser's word, from this site."""
    with TestClient(create_app(settings)) as visitor:
        shared = page_token(visitor.get("/cards/test-scaling").text)
        for extra in ({}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
            response = visitor.post(
                "/cards/test-scaling/choice",
                data={"choice": "b", "csrf_token": shared},
                headers=extra,
            )
            assert response.status_code == 403
            assert "set-cookie" not in response.headers
        assert choices(visitor) == []
        assert not visitor.cookies


def test_a_session_refuses_the_visitor_token(bare: TestClient) -> None:
    """Once a browser has its own session, a form carrying the public token is not its."""
    shared = page_token(TestClient(bare.app).get("/").text)
    sent = {"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": shared}
    response = bare.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=sent)
    assert response.status_code == 403
    assert choices(bare) == []

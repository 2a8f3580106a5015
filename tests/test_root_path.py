"""Served under a path (QUIZLAB_PUBLIC_URL=https://example.org/quiz): every URL carries it.

A reverse proxy may forward ``/quiz/cards/x`` as it is or strip the prefix to
``/cards/x``; both must work, and every link, form, script and redirect the
app sends must point under ``/quiz``, card links inside rendered card HTML
included (app.content.rendering.card_urls).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app

ROOT = "/quiz"
LINKING_CARD = "training-compute-6nd"  # links card:training-parameter-count
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "hx-get", "hx-post", "hx-put")


@pytest.fixture
def prefixed(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path / "data",
        reload_content=False,
        public_url=f"https://quiz.example.org{ROOT}/",
    )
    with TestClient(create_app(settings), base_url="https://quiz.example.org") as client:
        yield client


def root_absolute_urls(html: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    return [
        str(tag[name])
        for tag in soup.find_all(True)
        for name in URL_ATTRIBUTES
        if tag.has_attr(name) and str(tag[name]).startswith("/")
    ]


def outside_root(urls: list[str]) -> list[str]:
    return [url for url in urls if not url.startswith(f"{ROOT}/")]


@pytest.mark.parametrize("kept", [True, False], ids=["prefix-kept", "prefix-stripped"])
@pytest.mark.parametrize(
    "path", ["/", f"/cards/{LINKING_CARD}", "/decks/training", "/review", "/stats", "/interview"]
)
def test_every_url_on_a_page_is_under_the_root_path(
    prefixed: TestClient, path: str, kept: bool
) -> None:
    for attempt in ("rendered", "cached"):
        response = prefixed.get(ROOT + path if kept else path)
        assert response.status_code == 200, (attempt, response.text[:500])
        urls = root_absolute_urls(response.text)
        assert urls, "a page with no links at all"
        assert outside_root(urls) == [], attempt


def csrf_token(html: str) -> str:
    meta = BeautifulSoup(html, "html.parser").find("meta", {"name": "csrf-token"})
    assert meta is not None
    return str(meta["content"])


def test_card_links_inside_card_html_carry_the_root_path(prefixed: TestClient) -> None:
    page = prefixed.get(f"{ROOT}/cards/{LINKING_CARD}")
    revealed = prefixed.post(
        f"{ROOT}/cards/{LINKING_CARD}/reveal",
        data={"answer": "6ND"},
        headers={"X-CSRF-Token": csrf_token(page.text), "Sec-Fetch-Site": "same-origin"},
    )
    assert revealed.status_code == 200, revealed.text[:500]
    assert f'href="{ROOT}/cards/training-parameter-count"' in revealed.text
    assert outside_root(root_absolute_urls(revealed.text)) == []


def test_the_session_cookie_and_redirects_stay_under_the_root_path(
    prefixed: TestClient,
) -> None:
    home = prefixed.get(f"{ROOT}/")
    started = prefixed.post(
        f"{ROOT}/interview",
        data={"source": "decks", "deck": "training", "minutes": "15", "mix": "harder"},
        headers={"X-CSRF-Token": csrf_token(home.text), "Sec-Fetch-Site": "same-origin"},
        follow_redirects=False,
    )
    # The first form starts the session: its cookie is for the prefix only.
    cookie = started.headers["set-cookie"]
    assert cookie.startswith("__Secure-") and f"Path={ROOT}" in cookie, cookie
    assert started.status_code == 303, started.text[:500]
    assert started.headers["location"].startswith(f"{ROOT}/interview/"), started.headers
    round_page = prefixed.get(started.headers["location"])
    assert round_page.status_code == 200
    assert outside_root(root_absolute_urls(round_page.text)) == []


def test_without_a_path_in_the_public_url_nothing_is_prefixed() -> None:
    assert Settings(public_url="https://quiz.example.org/").root_path == ""
    assert Settings(public_url="https://quiz.example.org").root_path == ""
    assert Settings(public_url="https://example.org/a/quiz/").root_path == "/a/quiz"
    assert Settings().root_path == ""


def test_a_public_url_path_that_could_break_a_cookie_is_refused() -> None:
    with pytest.raises(ValueError, match="public_url"):
        Settings(public_url="https://example.org/quiz;Domain=evil.example")

"""How the cached card page goes out: gzip built around each visitor's token, ETag and 304."""

import gzip
import zlib

import pytest
from fastapi.testclient import TestClient

from app.web.middleware import csrf
from app.web.pagecache import Page
from app.web.routes import cards
from tests.conftest import csrf_token_of, start_session

PLACEHOLDER = csrf.PLACEHOLDER.encode()


def test_a_page_gzips_to_its_personalised_bytes() -> None:
    body = b"<p>" + PLACEHOLDER + b"</p>" + b"text " * 500 + PLACEHOLDER + b"<end>" + PLACEHOLDER
    page = Page.build(body, PLACEHOLDER)
    token = b"t" * 43
    personal = page.personalised(token)
    assert personal == body.replace(PLACEHOLDER, token)
    compressed = page.gzip(token, personal)
    assert gzip.decompress(compressed) == personal
    assert zlib.decompress(compressed, 16 + zlib.MAX_WBITS) == personal
    assert len(compressed) < len(personal) / 3


def test_the_card_page_is_gzipped_for_clients_that_accept_it(client: TestClient) -> None:
    plain = client.get("/cards/test-scaling", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    # httpx decodes the body: what a browser shows is the same page.
    zipped = client.get("/cards/test-scaling", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == "Accept-Encoding"
    assert zipped.text == plain.text
    assert csrf_token_of(client) in zipped.text
    assert int(zipped.headers["content-length"]) < len(plain.content) / 2


def test_an_unchanged_page_answers_304_to_its_etag(client: TestClient) -> None:
    first = client.get("/cards/test-scaling", headers={"Accept-Encoding": "gzip"})
    etag = first.headers["etag"]
    again = client.get(
        "/cards/test-scaling", headers={"Accept-Encoding": "gzip", "If-None-Match": etag}
    )
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    # The other encoding is other bytes: another ETag, so the whole page.
    plain = client.get(
        "/cards/test-scaling", headers={"Accept-Encoding": "identity", "If-None-Match": etag}
    )
    assert plain.status_code == 200
    assert plain.headers["etag"] != etag


def test_the_etag_covers_the_visitors_token(client: TestClient) -> None:
    my_token = start_session(client)
    mine = client.get("/cards/test-scaling").headers["etag"]
    client.cookies.clear()  # another visitor: no session, the visitor token
    theirs = client.get("/cards/test-scaling", headers={"If-None-Match": mine})
    assert theirs.status_code == 200
    assert theirs.headers["etag"] != mine
    assert my_token not in mine


def test_a_cached_page_is_sent_before_routing_and_is_the_same_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = client.get("/cards/test-scaling?view=scan")
    # From now on the route is never reached for this page: the cache answers.
    monkeypatch.setattr(cards.templates, "TemplateResponse", None)
    again = client.get("/cards/test-scaling?view=scan")
    assert again.status_code == 200
    assert again.text == first.text
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["content-security-policy"] == first.headers["content-security-policy"]
    head = client.head("/cards/test-scaling?view=scan")
    assert head.status_code == 200 and head.content == b""


def test_what_the_cache_cannot_answer_goes_to_the_route(client: TestClient) -> None:
    assert client.get("/cards/test-scaling").status_code == 200
    assert client.get("/cards/test-scaling?view=bogus").status_code == 422
    assert client.get("/cards/no-such-card").status_code == 404

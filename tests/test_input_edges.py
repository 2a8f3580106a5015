"""Input that is wrong in every way the issue tracker found gets a 4xx page naming the problem.

Never a 500: each value below once crashed a route (docs/security.md,
"Input"). Every test runs on SQLite and on PostgreSQL, whose 32-bit INTEGER
columns and text without NUL characters refuse what SQLite stores.
"""

import doctest
import json
from collections.abc import Iterator

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from httpx import Response

from app import safejson
from app.storage import values
from app.web.middleware.security import HEADERS
from tests.test_review_pages import fields

HX = {"HX-Request": "true"}
UID = "c" * 32


@pytest.fixture
def client(db_client: TestClient) -> Iterator[TestClient]:
    """The app on the test content, on SQLite and on PostgreSQL."""
    yield db_client


def message_of(html: str) -> str:
    """The error page's message, or the review page's notice, as one line."""
    page = BeautifulSoup(html, "html.parser")
    found = page.select_one(".error-message") or page.select_one(".notice-error")
    return " ".join(found.get_text(" ").split()) if found else ""


def assert_refused(response: Response, status: int, *words: str) -> None:
    """``status``, the security headers, and a message with each of ``words``."""
    assert response.status_code == status, response.text
    assert all(name in response.headers for name in HEADERS)
    text = message_of(response.text)
    for word in words:
        assert word in text, text


@pytest.mark.parametrize(
    ("after", "why"),
    [
        ("r²", "'r²'"),  # str.isdigit() says yes; int() says no
        ("r٣", "'r٣'"),  # an Arabic-Indic digit: int() would take it
        ("r9999999999999999999", "'r9999999999999999999'"),  # beyond SQLite's 64 bits
        ("r3000000000", "'r3000000000'"),  # beyond PostgreSQL's 32-bit ids
        ("r-1", "'r-1'"),
        ("x12", "'x12'"),
    ],
)
def test_a_practice_cursor_that_is_no_row_number_is_refused(
    client: TestClient, after: str, why: str
) -> None:
    response = client.get("/review", params={"mode": "practice", "after": after})
    assert_refused(response, 422, "after must be", why)


@pytest.mark.parametrize("path", ["/review/reveal", "/review/grade"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", "²"),
        ("version", "3000000000"),
        ("shown", "²"),
        ("shown", "1e12"),
    ],
)
def test_a_review_form_number_that_is_no_number_is_refused(
    client: TestClient, path: str, field: str, value: str
) -> None:
    form = fields(client.get("/review").text)
    response = client.post(path, data={**form, field: value, "rating": "3"}, headers=HX)
    assert_refused(response, 422, f"{field} must be", f"'{value}'")


def test_an_answer_with_a_nul_character_is_refused(client: TestClient) -> None:
    form = fields(client.get("/review").text)
    sent = {**form, "answer": "my\x00answer", "rating": "3"}
    assert_refused(client.post("/review/grade", data=sent, headers=HX), 422, "NUL")
    assert client.get("/progress").json()["reviews"] == []


def upload(client: TestClient, content: bytes) -> Response:
    return client.post("/stats/import", files={"file": ("progress.json", content)})


def import_message(html: str) -> str:
    found = BeautifulSoup(html, "html.parser").select_one("#import-message")
    return " ".join(found.get_text(" ").split()) if found else ""


def progress_file(**review: object) -> bytes:
    record = {
        "uid": UID,
        "card_id": "test-scaling",
        "rating": 3,
        "reviewed_at": "2025-01-01T00:00:00Z",
        **review,
    }
    document = {"format": "quizlab-progress", "version": 1, "reviews": [record]}
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000, "nested more than 32 levels deep"),
        (
            b'{"format": "quizlab-progress", "version": 1, "n": ' + b"7" * 5000 + b"}",
            "a number longer than 30 digits",
        ),
        (progress_file(reviewed_at="9999-12-31T23:59:59Z"), "reviews.0.reviewed_at"),
        (progress_file(reviewed_at="0001-01-01T00:00:00+14:00"), "reviews.0.reviewed_at"),
        (progress_file(answer="\ud800"), "reviews.0.answer"),
        (progress_file(answer="nul \x00 inside"), "reviews.0.answer: Value error, NUL"),
        (
            json.dumps(
                {
                    "format": "quizlab-progress",
                    "version": 1,
                    "choices": [
                        {
                            "uid": UID,
                            "card_id": "test-scaling",
                            "choice": "a",
                            "choice_text": "\x00",
                            "correct": True,
                            "attempted_at": "2025-01-01T00:00:00Z",
                        }
                    ],
                }
            ).encode(),
            "choices.0.choice_text: Value error, NUL",
        ),
        (b'{"format": "quizlab-progress", "answer": "\xff"}', "not UTF-8"),
    ],
)
def test_a_hostile_progress_file_is_refused(
    client: TestClient, content: bytes, message: str
) -> None:
    response = upload(client, content)
    assert_refused(response, 422)
    assert message in import_message(response.text)
    assert client.get("/progress").json()["reviews"] == []


@pytest.mark.parametrize("duration", [2**63, 3e9, 3_000_000_000])
def test_a_long_duration_imports_as_an_hour_on_every_database(
    client: TestClient, duration: float
) -> None:
    """What SQLite would keep, PostgreSQL's 32-bit column must take too: an hour at most."""
    response = upload(client, progress_file(duration_ms=duration))
    assert response.status_code == 200, import_message(response.text)
    [review] = client.get("/progress").json()["reviews"]
    assert review["duration_ms"] == 3_600_000


@pytest.mark.parametrize("module", [safejson, values])
def test_the_examples_in_the_docstrings_hold(module: object) -> None:
    failures, tried = doctest.testmod(module)  # type: ignore[arg-type]
    assert tried > 0 and failures == 0

"""When the server, the database or the disk fails, a page says so, with its headers.

A crash is a 500 page with the security headers; a database that does not
answer is a 503 with ``Retry-After``; a full disk is a 507 that says so; and
``/healthz`` says when storage cannot be written (docs/security.md, "Failures").
"""

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, event, text
from sqlalchemy.orm import sessionmaker

from app.settings import Settings
from app.storage.database import Database
from app.web import create_app
from app.web.middleware.security import HEADERS
from app.web.routes import health, home
from tests.conftest import CSRFClient
from tests.test_review_pages import fields

HX = {"HX-Request": "true"}


@pytest.fixture
def app(db_settings: Settings) -> FastAPI:
    """The app on the test content, on SQLite and on PostgreSQL."""
    return create_app(db_settings)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    """A client that gets the server's answer even when it crashed."""
    with CSRFClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def message_of(html: str) -> str:
    found = BeautifulSoup(html, "html.parser").select_one(".error-message")
    return " ".join(found.get_text(" ").split()) if found else ""


def test_a_crash_is_a_page_with_the_security_headers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(home, "render", crash)
    response = client.get("/")
    assert response.status_code == 500
    assert all(response.headers.get(name) == value for name, value in HEADERS.items())
    assert response.headers["content-type"].startswith("text/html")
    assert message_of(response.text).startswith("The server hit an error it did not expect")
    monkeypatch.undo()
    assert client.get("/").status_code == 200


def unreachable(database: Database) -> None:
    """Point ``database`` at a server that is not there: PostgreSQL on a closed port."""
    gone = create_engine("postgresql+psycopg://quizlab:quizlab@127.0.0.1:9/none")
    database.engine = gone
    database.sessions = sessionmaker(gone, expire_on_commit=False)


def test_a_database_that_does_not_answer_is_a_503_with_retry_after(
    app: FastAPI, client: TestClient
) -> None:
    unreachable(app.state.db)
    for response in (client.get("/stats"), client.get("/review", headers=HX)):
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        assert all(name in response.headers for name in HEADERS)
        assert "The database is not answering" in response.text
    assert client.get("/healthz").status_code == 503


@pytest.fixture
def sqlite_client(settings: Settings) -> Iterator[TestClient]:
    """The app on SQLite alone: its file is what the tests below fill up."""
    with CSRFClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


def fill_up(database: Database) -> None:
    """Let the SQLite file grow no more, as when the disk under it is full."""
    with database.engine.connect() as connection:
        pages = connection.exec_driver_sql("PRAGMA page_count").scalar()

    def cap(connection: object, _record: object) -> None:
        connection.execute(f"PRAGMA max_page_count = {pages}")  # type: ignore[attr-defined]

    event.listen(database.engine, "connect", cap)
    database.engine.dispose()


def test_a_full_disk_is_a_507_that_says_so(sqlite_client: TestClient) -> None:
    database: Database = sqlite_client.app.state.db  # type: ignore[attr-defined]
    form = fields(sqlite_client.get("/review").text)
    fill_up(database)
    sent = {**form, "answer": "a long answer " * 1400, "rating": "3"}
    response = sqlite_client.post("/review/grade", data=sent)
    assert response.status_code == 507
    assert all(name in response.headers for name in HEADERS)
    assert "storage is full" in message_of(response.text)


def test_healthz_says_when_the_disk_is_full(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        health.shutil, "disk_usage", lambda _path: SimpleNamespace(total=10**9, used=10**9, free=0)
    )
    response = sqlite_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["detail"] == "storage is full: less than 16 MB free"


def test_healthz_says_when_the_database_cannot_be_written(sqlite_client: TestClient) -> None:
    database: Database = sqlite_client.app.state.db  # type: ignore[attr-defined]

    def read_only(connection: object, _record: object) -> None:
        connection.execute("PRAGMA query_only = ON")  # type: ignore[attr-defined]

    event.listen(database.engine, "connect", read_only)
    database.engine.dispose()
    with database.engine.connect() as connection:  # reads still work
        assert connection.execute(text("SELECT 1")).scalar() == 1
    response = sqlite_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["detail"] == "the database cannot be written"

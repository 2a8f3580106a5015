"""Fixtures shared by the test suite: content folders, app clients, a live server, Chromium."""

import base64
import json
import os
import re
import secrets
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import httpx
import pytest
import sqlalchemy
import uvicorn
from fastapi.testclient import TestClient

from app.content.library import Library, Snapshot
from app.practice import grading, items, stored
from app.practice.activity import Learner
from app.practice.scheduling import Rating, Scheduler
from app.settings import PROJECT_ROOT, Settings
from app.storage.database import Database
from app.web import create_app
from app.web.middleware.csrf import SAFE_METHODS
from app.web.middleware.sessions import COOKIE
from tests.cardtext import GOOD_CARD, OTHER_CARD

ARTIFACTS = PROJECT_ROOT / "test-artifacts"


class CSRFClient(TestClient):
    """A TestClient that sends the CSRF token with every state-changing request, as a browser would.

    It does what static/app.js does for htmx: reads the token and sends it in
    ``X-CSRF-Token``. Until it holds a session cookie it is a first-time
    visitor: the token is the visitor token of a page's meta tag, and, like a
    browser's same-origin request, its first form says ``Sec-Fetch-Site:
    same-origin`` (unless the test sets that or ``Origin`` itself).
    tests/test_csrf.py checks requests without these are refused.
    """

    def csrf_token(self) -> str:
        return csrf_token_of(self)

    def request(self, method: str, url: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if method.upper() not in SAFE_METHODS:
            headers = dict(kwargs.pop("headers", None) or {})
            headers.setdefault("X-CSRF-Token", self.csrf_token())
            named = {name.lower() for name in headers}
            if session_cookie(self) is None and not named & {"sec-fetch-site", "origin"}:
                headers["Sec-Fetch-Site"] = "same-origin"
            kwargs["headers"] = headers
        return super().request(method, url, **kwargs)


def session_cookie(client: Any) -> str | None:
    """The client's session cookie, if it has one (it gets one with its first form)."""
    cookie: str | None = client.cookies.get(COOKIE) or client.cookies.get(f"__Host-{COOKIE}")
    return cookie


def csrf_token_of(client: Any) -> str:
    """The client's CSRF token: its session's (signed, not secret from its owner), else the
    visitor token every cookieless page carries."""
    cookie = session_cookie(client)
    if cookie is None:
        page = client.get("/")
        if page.status_code in (302, 303, 307):  # signed out in accounts mode: the sign-in page
            page = client.get(page.headers["location"])
        return page_csrf_token(page.text)
    body = cookie.split(".")[0]
    token: str = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["c"]
    return token


def start_session(client: httpx.Client, card_id: str = "test-scaling") -> str:
    """Send a first form, as a visitor revealing a card does: the session it starts has its
    own token (returned)."""
    token = csrf_token_of(client)
    response = client.post(
        f"/cards/{card_id}/reveal",
        headers={"X-CSRF-Token": token, "Sec-Fetch-Site": "same-origin"},
    )
    assert response.status_code == 200, response.text[:300]
    assert session_cookie(client) is not None
    return csrf_token_of(client)


def page_csrf_token(html: str) -> str:
    """The token in a page's ``<meta name="csrf-token">``."""
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)
    assert found, "the page has no csrf-token meta tag"
    return found.group(1)


@pytest.fixture
def content_dir(tmp_path: Path) -> Path:
    """A content folder with two small valid cards in deck `testdeck`."""
    deck = tmp_path / "content" / "testdeck"
    deck.mkdir(parents=True)
    (deck / "scaling.md").write_text(GOOD_CARD)
    (deck / "other.md").write_text(OTHER_CARD)
    return tmp_path / "content"


@pytest.fixture
def settings(tmp_path: Path, content_dir: Path) -> Settings:
    """Settings pointing at the test content and a data folder of this test's own."""
    return Settings(content_dir=content_dir, data_dir=tmp_path / "data", reload_content=False)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """The app on the small test content, started through its lifespan."""
    with CSRFClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def bundled_client(tmp_path: Path) -> Iterator[TestClient]:
    """The app on the bundled content/ folder."""
    settings = Settings(data_dir=tmp_path / "data", reload_content=False)
    with CSRFClient(create_app(settings)) as test_client:
        yield test_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def healthy_within(url: str, seconds: float) -> bool:
    """Whether a server started elsewhere (a subprocess) answers ``url``/healthz in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return True
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.05)
    return False


class LiveServer:
    """A real uvicorn server on a free port, in a thread of the test process."""

    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(settings), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("live server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots and other files a person should look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, object]) -> dict[str, object]:
    """Debian's Chromium: Playwright's own browser download is not reachable here."""
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    return {
        **browser_type_launch_args,
        "executable_path": executable,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture(scope="session")
def worker_url() -> Iterator[str]:
    """A real demo worker subprocess (torch on CPU), shared by the session."""
    from app.live.localworker import LocalWorker

    with LocalWorker() as url:
        yield url


# -- Storage: every database-backed test runs on SQLite, and on PostgreSQL too
# when QUIZLAB_TEST_DATABASE_URL names a server (.ci/run starts one).

TEST_DATABASE_URL = os.environ.get("QUIZLAB_TEST_DATABASE_URL", "")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh, empty database: a SQLite file, or a schema of its own on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'quizlab.sqlite3'}"
        return
    if not TEST_DATABASE_URL:
        pytest.skip("QUIZLAB_TEST_DATABASE_URL is not set: no PostgreSQL to test against")
    schema = f"test_{secrets.token_hex(6)}"
    admin = sqlalchemy.create_engine(TEST_DATABASE_URL)
    with admin.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = sqlalchemy.engine.make_url(TEST_DATABASE_URL).update_query_dict(
        {"options": f"-csearch_path={schema}"}
    )
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """The database at ``database_url`` with every migration applied."""
    db = Database(database_url)
    db.upgrade()
    yield db
    db.dispose()


@pytest.fixture
def learner(database: Database) -> Learner:
    """The local user, with days ending at midnight UTC."""
    return Learner(database.local_user_id, ZoneInfo("UTC"))


@pytest.fixture
def snapshot(content_dir: Path) -> Snapshot:
    """The two test cards, loaded."""
    return Library(content_dir).load()


@pytest.fixture
def db_settings(settings: Settings, database_url: str) -> Settings:
    """The test settings, on the database at ``database_url``."""
    return settings.model_copy(update={"database_url": database_url})


@pytest.fixture
def db_client(db_settings: Settings) -> Iterator[TestClient]:
    """The app on the test content and ``database_url``, started through its lifespan."""
    with CSRFClient(create_app(db_settings)) as test_client:
        yield test_client


class Grader:
    """Grades items the way the review form does: current version, a fresh token."""

    def __init__(self, database: Database, learner: Learner) -> None:
        self.database = database
        self.learner = learner
        self.scheduler = Scheduler()

    def __call__(
        self,
        snapshot: Snapshot,
        key: str,
        rating: int,
        at: datetime,
        *,
        practice: bool = False,
        answer: str = "",
    ) -> grading.Graded:
        item = items.find_item(snapshot, key)
        with self.database.session() as session:
            version = stored.current_schedule(session, self.learner.user_id, item, at).version
            return grading.grade(
                session,
                self.learner,
                item=item,
                rating=Rating(rating),
                version=version,
                token=grading.new_token(),
                now=at,
                scheduler=self.scheduler,
                answer=answer,
                practice=practice,
            )


@pytest.fixture
def grade(database: Database, learner: Learner) -> Grader:
    """Record a review of an item by key at a given time, as the review page would."""
    return Grader(database, learner)


Result = TypeVar("Result")


def all_at_once(count: int, work: Callable[[int], Result]) -> list[Result]:
    """``work(0)`` … ``work(count - 1)``, each in a thread, all released at the same moment.

    Their results in order; the first exception any of them raised is raised
    here (a thread's exception is otherwise lost).
    """
    barrier = threading.Barrier(count)
    results: dict[int, Result] = {}
    errors: list[BaseException] = []

    def run(number: int) -> None:
        barrier.wait()
        try:
            results[number] = work(number)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [results[number] for number in range(count)]

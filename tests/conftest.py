"""Fixtures shared by the test suite: content folders, app clients, a live server, Chromium."""

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import PROJECT_ROOT, Settings
from tests.cardtext import GOOD_CARD, OTHER_CARD

ARTIFACTS = PROJECT_ROOT / "test-artifacts"


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
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def bundled_client(tmp_path: Path) -> Iterator[TestClient]:
    """The app on the bundled content/ folder."""
    settings = Settings(data_dir=tmp_path / "data", reload_content=False)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
    from app.localworker import LocalWorker

    with LocalWorker() as url:
        yield url

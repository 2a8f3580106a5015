"""Killing the server mid-review loses at most the review in flight, and the database opens cleanly."""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, text

from app.settings import Settings
from app.storage.database import Database, head_revision
from app.storage.models import DailyActivity, ReviewLog
from app.web.secret import session_secret
from tests.conftest import all_at_once, csrf_token_of, free_port, healthy_within

HX = {"HX-Request": "true"}
GRADES_BEFORE_KILL = 40


def start_server(settings: Settings, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "QUIZLAB_CONTENT_DIR": str(settings.content_dir),
        "QUIZLAB_DATA_DIR": str(settings.data_dir),
    }
    env.pop("QUIZLAB_DATABASE_URL", None)
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "uvicorn", "--factory", "app.web:create_app"),
            *("--port", str(port), "--log-level", "warning"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if healthy_within(f"http://127.0.0.1:{port}", 30):
        return server
    server.kill()
    raise RuntimeError("server did not start")


def grade_until_refused(base: str, accepted: list[str], stop: threading.Event) -> None:
    """Post practice grades one after another; note each one the server acknowledged."""
    with httpx.Client(base_url=base, timeout=5) as client:
        csrf = csrf_token_of(client)
        while not stop.is_set():
            uid = uuid.uuid4().hex
            form = {
                "item": "test-scaling",
                "version": "0",
                "token": uid,
                "mode": "practice",
                "rating": "3",
            }
            try:
                response = client.post(
                    "/review/grade",
                    data=form,
                    headers={**HX, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "same-origin"},
                )
                csrf = response.headers.get("x-csrf-token", csrf)  # the first starts a session
            except httpx.TransportError:
                return
            assert response.status_code == 200, response.text
            accepted.append(uid)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killing_the_server_loses_at_most_the_review_in_flight(settings: Settings) -> None:
    port = free_port()
    server = start_server(settings, port)
    accepted: list[str] = []
    stop = threading.Event()
    learner = threading.Thread(
        target=grade_until_refused, args=(f"http://127.0.0.1:{port}", accepted, stop)
    )
    learner.start()
    try:
        deadline = time.monotonic() + 60
        while len(accepted) < GRADES_BEFORE_KILL and learner.is_alive():
            assert time.monotonic() < deadline, "grades too slow"
            time.sleep(0.005)
        server.send_signal(signal.SIGKILL)  # mid-stream: a grade is usually in flight
        server.wait(timeout=10)
        learner.join(timeout=10)
    finally:
        stop.set()
        if server.poll() is None:
            server.kill()
    assert len(accepted) >= GRADES_BEFORE_KILL

    database = Database(settings.resolved_database_url)
    try:
        with database.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        database.prepare()  # migrations and the local user: what start-up does
        assert database.current_revision() == head_revision()
        with database.session() as session:
            logged = set(session.scalars(select(ReviewLog.uid)))  # type: ignore[call-overload]
            totals = session.scalar(select(func.sum(DailyActivity.reviews)))
            assert session.execute(text("SELECT 1")).scalar() == 1
    finally:
        database.dispose()
    # Every acknowledged grade is there; at most one more (sent, stored, never answered).
    assert set(accepted) <= logged
    assert len(logged) - len(accepted) <= 1
    # The running totals were written in the same transactions as the log.
    assert totals == len(logged)

    # And the server starts again on the same files.
    server = start_server(settings, port)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/stats").status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_data_folder_keeps_the_session_key(tmp_path: Path) -> None:
    """Restarts keep sessions: the random key is made once and read back."""
    settings = Settings(data_dir=tmp_path / "data")
    key = session_secret(settings)
    assert len(key) >= 32
    assert session_secret(Settings(data_dir=tmp_path / "data")) == key
    assert (tmp_path / "data" / "secret_key").stat().st_mode & 0o077 == 0


def test_replicas_starting_together_share_one_session_key(tmp_path: Path) -> None:
    """Two web containers on one volume both run as PID 1: starting together,
    neither may fail on the other's draft, and both must sign with one key.

    Threads share a PID, so they stand in for the containers here."""
    data = tmp_path / "data"
    keys = all_at_once(16, lambda _: session_secret(Settings(data_dir=data)))
    assert len(set(keys)) == 1
    assert [entry.name for entry in data.iterdir()] == ["secret_key"]

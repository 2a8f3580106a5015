"""A burst of sign-ins: a few Argon2 checks at a time, none past the limit, memory that holds.

Each check holds its Argon2 memory while it runs; 40 wrong sign-ins at once
from one address once ran 34 checks at once (the address limit is 20, and
failures were counted after the check) and took the web process past 1 GB.
These run against a real server (uvicorn, one event loop), on SQLite and on
PostgreSQL. scripts/load_signin.py measures the memory itself.
"""

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from app.accounts import passwords
from app.accounts import users as accounts
from app.accounts.limits import ADDRESS_LIMIT
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import User
from tests.conftest import LiveServer, all_at_once, csrf_token_of

PASSWORD = "correct horse battery"


class Checks:
    """Counts Argon2 verifications, and the most that ran at the same moment."""

    def __init__(self, delay: float = 0.0) -> None:
        self.lock = threading.Lock()
        self.count = self.running = self.most = 0
        self.delay = delay

    def wrap(self, verify: Callable[..., bool]) -> Callable[..., bool]:
        def counted(hasher: PasswordHasher, *args: Any, **kwargs: Any) -> bool:
            with self.lock:
                self.count += 1
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                time.sleep(self.delay)
                return verify(hasher, *args, **kwargs)
            finally:
                with self.lock:
                    self.running -= 1

        return counted


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Checks:
    """Every Argon2 verification in this process, counted."""
    found = Checks()
    monkeypatch.setattr(PasswordHasher, "verify", found.wrap(PasswordHasher.verify))
    return found


@pytest.fixture
def server(db_settings: Settings) -> Iterator[LiveServer]:
    """A real accounts-mode server with 64 learners, learner0 … learner63."""
    settings = db_settings.model_copy(update={"auth": "accounts"})
    database = Database(settings.resolved_database_url)
    database.upgrade()
    with database.session() as session:
        for n in range(64):
            accounts.create_user(
                session, name=f"learner{n}", password=PASSWORD, now=accounts.now_utc()
            )
    database.dispose()
    with LiveServer(settings) as live:
        yield live


def sign_in(server: LiveServer, name: str, password: str) -> httpx.Response:
    """One browser: open the sign-in page (its token), then send the form."""
    with httpx.Client(base_url=server.url, timeout=60) as browser:
        form = {"name": name, "password": password, "csrf_token": csrf_token_of(browser)}
        # What a browser says of a form sent from one of this site's pages.
        return browser.post("/login", data=form, headers={"Sec-Fetch-Site": "same-origin"})


def test_a_burst_of_wrong_sign_ins_checks_at_most_the_address_limit(
    server: LiveServer, checks: Checks
) -> None:
    statuses = all_at_once(40, lambda n: sign_in(server, f"guess{n}", "wrong password").status_code)
    assert set(statuses) <= {401, 429}
    assert checks.count <= ADDRESS_LIMIT
    assert statuses.count(401) == checks.count
    assert checks.most <= passwords.MAX_CONCURRENT


def test_64_learners_signing_in_at_once_all_get_in_a_few_checks_at_a_time(
    server: LiveServer, checks: Checks
) -> None:
    """One address (a class behind a NAT): the successes never lock it."""
    statuses = all_at_once(64, lambda n: sign_in(server, f"learner{n}", PASSWORD).status_code)
    assert statuses == [303] * 64
    assert checks.count == 64
    assert checks.most <= passwords.MAX_CONCURRENT


def test_a_sign_in_that_waits_too_long_gets_503_with_retry_after(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = Checks(delay=0.5)
    monkeypatch.setattr(PasswordHasher, "verify", slow.wrap(PasswordHasher.verify))
    monkeypatch.setattr(passwords, "WAIT_SECONDS", 0.2)
    answers = all_at_once(6, lambda n: sign_in(server, f"learner{n}", PASSWORD))
    busy = [a for a in answers if a.status_code == 503]
    assert busy and all(a.headers["retry-after"] == "2" for a in busy)
    assert all("try again in 2 seconds" in a.text for a in busy)
    assert {a.status_code for a in answers} == {303, 503}


def test_hashes_use_parameters_that_fit_a_256_mb_replica() -> None:
    assert passwords.hash_password(PASSWORD).startswith("$argon2id$v=19$m=19456,t=2,p=1$")


def test_a_hash_with_the_old_parameters_is_replaced_at_sign_in(
    server: LiveServer, db_settings: Settings
) -> None:
    database = Database(db_settings.resolved_database_url)
    with database.session() as session:
        user = session.scalar(select(User).where(User.name == "learner1"))  # type: ignore[arg-type]
        assert user is not None
        user.password_hash = PasswordHasher().hash(PASSWORD)  # 64 MiB, argon2-cffi's default
        session.commit()
    assert sign_in(server, "learner1", PASSWORD).status_code == 303
    with database.session() as session:
        stored = session.scalar(select(User.password_hash).where(User.name == "learner1"))  # type: ignore[call-overload,arg-type]
    database.dispose()
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")

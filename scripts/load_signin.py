"""Load test: a burst of sign-ins against a real server, its peak memory and its answers.

    .venv/bin/python scripts/load_signin.py [--learners 64] [--guesses 40]

Starts a fresh accounts-mode server (uvicorn, SQLite, no worker) with
``--learners`` accounts, then, on that server:

1. every learner signs in at the same moment, from one address (a class
   behind a NAT), each from their own browser (session cookie, CSRF token);
2. a fresh server takes ``--guesses`` wrong sign-ins at once from one address.

For each, prints the answers by status, the slowest answer, and the server's
peak resident memory before and after (VmHWM, Linux). docs/security.md quotes
the figures: a web replica is sized at 256 MB (docs/self-hosting.md).
"""

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.accounts import users as accounts  # noqa: E402
from app.storage.database import Database  # noqa: E402
from tests.cardtext import GOOD_CARD, OTHER_CARD  # noqa: E402
from tests.conftest import free_port, healthy_within, page_csrf_token  # noqa: E402

PASSWORD = "correct horse battery"


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM: this load test reads Linux's /proc")


def prepare(root: Path, learners: int) -> dict[str, str]:
    """A content folder, a database with the learners, and the server's environment."""
    content = root / "content" / "testdeck"
    content.mkdir(parents=True, exist_ok=True)
    (content / "scaling.md").write_text(GOOD_CARD)
    (content / "other.md").write_text(OTHER_CARD)
    data = root / f"data-{time.monotonic_ns()}"
    database = Database(f"sqlite:///{data / 'quizlab.sqlite3'}")
    database.upgrade()
    with database.session() as session:
        for n in range(learners):
            accounts.create_user(
                session, name=f"learner{n}", password=PASSWORD, now=accounts.now_utc()
            )
    database.dispose()
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "QUIZLAB_CONTENT_DIR": str(content.parent),
        "QUIZLAB_DATA_DIR": str(data),
        "QUIZLAB_AUTH": "accounts",
    }


async def sign_in(url: str, name: str, password: str, start: asyncio.Event) -> tuple[int, float]:
    """One browser: the sign-in page first, then the form once every browser is ready."""
    # Sec-Fetch-Site: what a browser says of a form sent from the site's own page.
    headers = {"Sec-Fetch-Site": "same-origin"}
    async with httpx.AsyncClient(base_url=url, timeout=120, headers=headers) as browser:
        page = await browser.get("/login")
        form = {"name": name, "password": password, "csrf_token": page_csrf_token(page.text)}
        await start.wait()
        began = time.perf_counter()
        response = await browser.post("/login", data=form)
        return response.status_code, time.perf_counter() - began


async def burst(url: str, attempts: list[tuple[str, str]]) -> list[tuple[int, float]]:
    start = asyncio.Event()
    tasks = [asyncio.create_task(sign_in(url, name, pw, start)) for name, pw in attempts]
    await asyncio.sleep(2)  # every browser has its session
    start.set()
    return await asyncio.gather(*tasks)


def run(label: str, env: dict[str, str], attempts: list[tuple[str, str]]) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.web:create_app", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy_within(url, 30):
            raise SystemExit("the server did not start")
        before = peak_mb(server.pid)
        answers = asyncio.run(burst(url, attempts))
        statuses = Counter(status for status, _ in answers)
        slowest = max(seconds for _, seconds in answers)
        print(
            f"{label}: {dict(sorted(statuses.items()))}, slowest {slowest:.2f} s; "
            f"server peak RSS {before:.0f} MB before, {peak_mb(server.pid):.0f} MB after"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=64)
    parser.add_argument("--guesses", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        learners = [(f"learner{n}", PASSWORD) for n in range(args.learners)]
        run(f"{args.learners} learners at once", prepare(root, args.learners), learners)
        guesses = [(f"guess{n}", "wrong password") for n in range(args.guesses)]
        run(f"{args.guesses} wrong guesses at once", prepare(root, 0), guesses)


if __name__ == "__main__":
    main()

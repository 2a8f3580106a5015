"""Load test: many learners reviewing at once against one server, then count every review.

    .venv/bin/python scripts/load_reviews.py [--learners 64] [--duration 60]
        [--database-url postgresql+psycopg://...]

Starts one uvicorn process in accounts mode (QUIZLAB_AUTH=accounts) on the
bundled content, creates one account per learner, and signs each in. Every
learner then loops as a person at the review page does: open the queue (due
items first, practice once none is due), reveal with a typed answer, grade.
Afterwards it checks the database: the review log holds exactly the grades
the server acknowledged, each under the learner who sent it, and the daily
totals agree. Prints requests, errors and p50 / p99 per request kind; exits
1 on any error or lost review. Figures go in docs/performance.md.
"""

import argparse
import asyncio
import os
import random
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, func, select  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from app.accounts import users as accounts  # noqa: E402
from app.storage.database import Database  # noqa: E402
from app.storage.models import DailyActivity, ReviewLog, User  # noqa: E402
from tests.conftest import healthy_within  # noqa: E402

PASSWORD = "load-test password"
HX = {"HX-Request": "true"}
FORM = re.compile(r'<form class="(answer-form|grade-form)"(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">')
META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fields(html: str, kind: str) -> dict[str, str] | None:
    for found_kind, body in FORM.findall(html):
        if found_kind == kind:
            return dict(HIDDEN.findall(body))
    return None


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.accepted: dict[str, list[str]] = defaultdict(list)  # learner -> review uids

    async def timed(self, kind: str, call: "asyncio.Future[httpx.Response]") -> httpx.Response:
        start = time.perf_counter()
        response = await call
        self.latency[kind].append((time.perf_counter() - start) * 1000)
        if response.status_code >= 400:
            self.errors.append(f"{kind}: {response.status_code} {response.text[:200]}")
        return response


async def learner(name: str, base: str, stats: Stats, until: float) -> None:
    async with httpx.AsyncClient(
        base_url=base,
        timeout=30,
        follow_redirects=True,
        # What a browser says of a form sent from the site's own page (docs/security.md).
        headers={"Sec-Fetch-Site": "same-origin"},
    ) as client:
        page = await client.get("/login")
        token = META.search(page.text)
        assert token, page.text[:500]
        signed = await client.post(
            "/login",
            data={"name": name, "password": PASSWORD, "csrf_token": token.group(1)},
        )
        if signed.status_code != 200 or "Sign out" not in signed.text:
            stats.errors.append(f"sign-in {name}: {signed.status_code}")
            return
        csrf = META.search(signed.text)
        assert csrf
        headers = {**HX, "X-CSRF-Token": csrf.group(1)}
        mode = "due"
        while time.monotonic() < until:
            queue = await stats.timed("queue", client.get("/review", params={"mode": mode}))
            shown = fields(queue.text, "answer-form")
            if shown is None:
                if mode == "practice":
                    stats.errors.append(f"{name}: nothing to practise")
                    return
                mode = "practice"
                continue
            answer = {**shown, "answer": "softmax of scaled scores"}
            revealed = await stats.timed(
                "reveal", client.post("/review/reveal", data=answer, headers=headers)
            )
            grade = fields(revealed.text, "grade-form")
            if grade is None:
                continue
            grade["rating"] = str(random.choice((1, 2, 3, 3, 3, 4)))
            graded = await stats.timed(
                "grade", client.post("/review/grade", data=grade, headers=headers)
            )
            if graded.status_code == 200 and "Recorded" in graded.text:
                stats.accepted[name].append(grade["token"])


def start_server(data_dir: Path, database_url: str | None, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "QUIZLAB_DATA_DIR": str(data_dir), "QUIZLAB_AUTH": "accounts"}
    if database_url:
        env["QUIZLAB_DATABASE_URL"] = database_url
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.web:create_app"]
    server = subprocess.Popen(
        [*command, "--port", str(port), "--log-level", "warning", "--no-access-log"],
        env=env,
        cwd=ROOT,
    )
    if healthy_within(f"http://127.0.0.1:{port}", 60):
        return server
    server.kill()
    raise SystemExit("the server did not start")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=64)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--database-url", default=None, help="empty: SQLite in a temp folder")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="quizlab-load-"))
    url = args.database_url or f"sqlite:///{data_dir / 'quizlab.sqlite3'}"
    schema = None
    if args.database_url:
        # A schema of its own, dropped afterwards: the database is left as it was.
        schema = f"load_{secrets.token_hex(6)}"
        with create_engine(args.database_url).begin() as connection:
            connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
        url = (
            make_url(args.database_url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    database = Database(url)
    database.upgrade()
    names = [f"learner{i:03d}" for i in range(args.learners)]
    with database.session() as session:
        for name in names:
            accounts.create_user(session, name=name, password=PASSWORD, now=accounts.now_utc())

    port = free_port()
    server = start_server(data_dir, url if schema else None, port)
    stats = Stats()
    try:
        until = time.monotonic() + args.duration

        async def everyone() -> None:
            base = f"http://127.0.0.1:{port}"
            await asyncio.gather(*(learner(name, base, stats, until) for name in names))

        started = time.monotonic()
        asyncio.run(everyone())
        elapsed = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)

    with database.session() as session:
        logged = session.execute(
            select(User.name, ReviewLog.uid).join(User, User.id == ReviewLog.user_id)  # type: ignore[arg-type]
        ).all()
        totals = session.scalar(select(func.sum(DailyActivity.reviews))) or 0
    database.dispose()
    if schema:
        with create_engine(args.database_url).begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    by_learner: dict[str, set[str]] = defaultdict(set)
    for name, uid in logged:
        by_learner[name].add(uid)
    accepted = sum(len(uids) for uids in stats.accepted.values())
    lost = sum(len(set(uids) - by_learner[name]) for name, uids in stats.accepted.items())
    extra = len(logged) - accepted

    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"{backend}: {args.learners} learners for {elapsed:.0f} s on one uvicorn process")
    for kind in ("queue", "reveal", "grade"):
        times = stats.latency[kind]
        if times:
            print(
                f"  {kind:7s} {len(times):6d} requests  p50 {statistics.median(times):7.1f} ms"
                f"  p99 {percentile(times, 0.99):7.1f} ms"
            )
    requests = sum(len(t) for t in stats.latency.values())
    print(f"  {requests} requests ({requests / elapsed:.0f}/s), {len(stats.errors)} errors")
    print(
        f"  grades accepted {accepted}, review log rows {len(logged)}, "
        f"daily totals {totals}, lost {lost}, unacknowledged extra {extra}"
    )
    for error in stats.errors[:10]:
        print("  error:", error)
    if stats.errors or lost or extra or totals != len(logged):
        raise SystemExit(1)


if __name__ == "__main__":
    main()

"""Benchmark the practice pages on a big history: the next due item and the stats page.

One user with ITEMS review items (a quarter of them card answers, the rest
follow-ups, on ITEMS / 4 generated cards) and REVIEWS rows in the review log,
spread over two years. The pages are fetched through the real app in process
(routing, dependencies, queries, templates), RUNS times each after a warm-up,
and p50 / p99 latencies printed as a Markdown table.

    .venv/bin/python scripts/bench_practice.py                       # SQLite file
    .venv/bin/python scripts/bench_practice.py --database-url postgresql+psycopg://u:p@host/db

On PostgreSQL the data goes into a schema of its own, dropped at the end.
Figures and the machine they were measured on: docs/performance.md.
"""

import argparse
import gc
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import sqlalchemy
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import insert

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import practice
from app.content.library import Library
from app.practice import activity, stats
from app.practice.activity import Learner
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import ChoiceAttempt, ReviewItem, ReviewLog
from app.web import create_app

ROOT = Path(__file__).resolve().parent.parent
FOLLOW_UPS = 3  # per card: each card gives 1 + FOLLOW_UPS review items
DECKS = 10
CARD = """\
---
id: {id}
title: Generated card {n}
question: Why does generated card {n} matter?
deck: {deck}
difficulty: {difficulty}
minutes: 3
---

## Answer

Because of reason {n}, which $\\sqrt{{d_k}}$ keeps in range.

## TL;DR

Reason {n}.

## Key points

- Reason {n}
- Kept in range by the divisor
- It matters

## Follow-ups

{follow_ups}
## Red flags

### Saying it does not matter {{#no-matter}}

It does.
"""


def write_content(root: Path, cards: int) -> Path:
    for deck in range(DECKS):
        (root / f"deck{deck}").mkdir(parents=True)
    for n in range(cards):
        deck = f"deck{n % DECKS}"
        follow_ups = "".join(
            f"### Follow-up {k} of card {n}? {{#f{k}}}\n\nApproach {k}.\n\n"
            for k in range(FOLLOW_UPS)
        )
        text = CARD.format(
            id=f"gen-{n}",
            n=n,
            deck=deck,
            difficulty=("easy", "medium", "hard")[n % 3],
            follow_ups=follow_ups,
        )
        (root / deck / f"gen-{n}.md").write_text(text)
    return root


@contextmanager
def fresh_database(url: str | None, workdir: Path) -> Iterator[str]:
    if url is None:
        yield f"sqlite:///{workdir / 'bench.sqlite3'}"
        return
    schema = f"bench_{secrets.token_hex(4)}"
    admin = sqlalchemy.create_engine(url)
    with admin.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield (
            sqlalchemy.engine.make_url(url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with admin.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


def populate(database: Database, learner: Learner, items: int, reviews: int, now: datetime) -> None:
    """Item states and a log of the right sizes; 5% of the items due now."""
    rng = random.Random(1)
    keys = [
        (f"gen-{n}", "" if k == 0 else f"f{k - 1}")
        for n in range(items // (1 + FOLLOW_UPS))
        for k in range(1 + FOLLOW_UPS)
    ]
    per_item = reviews // len(keys)
    start = now - timedelta(days=730)
    with database.session() as session:
        rows = []
        for card_id, follow_up in keys:
            last = now - timedelta(days=rng.uniform(0, 60))
            overdue = rng.random() < 0.05
            due = now - timedelta(days=rng.uniform(0, 2) if overdue else -rng.uniform(0.01, 120))
            rows.append(
                {
                    "user_id": learner.user_id,
                    "card_id": card_id,
                    "follow_up": follow_up,
                    "state": 2,
                    "step": None,
                    "stability": rng.uniform(1, 200),
                    "difficulty": rng.uniform(1, 10),
                    "due": due,
                    "last_review": last,
                    "first_review": start,
                    "lapses": rng.randint(0, 5),
                    "version": per_item,
                }
            )
        session.execute(insert(ReviewItem), rows)
        session.commit()
        batch: list[dict[str, object]] = []
        step = timedelta(days=730) / per_item
        for index in range(per_item):
            for card_id, follow_up in keys:
                at = start + step * index + timedelta(seconds=rng.randint(0, 3600))
                batch.append(
                    {
                        "uid": secrets.token_hex(16),
                        "user_id": learner.user_id,
                        "card_id": card_id,
                        "follow_up": follow_up,
                        "rating": rng.choices((1, 2, 3, 4), (1, 2, 6, 1))[0],
                        "answer": "",
                        "duration_ms": rng.randint(2000, 90000),
                        "reviewed_at": at,
                        "practice": False,
                    }
                )
                if len(batch) == 20_000:
                    session.execute(insert(ReviewLog), batch)
                    batch = []
        if batch:
            session.execute(insert(ReviewLog), batch)
        session.execute(
            insert(ChoiceAttempt),
            [
                {
                    "uid": secrets.token_hex(16),
                    "user_id": learner.user_id,
                    "card_id": f"gen-{rng.randrange(items // 4)}",
                    "choice": "a",
                    "choice_text": "",
                    "correct": rng.random() < 0.7,
                    "attempted_at": now - timedelta(days=rng.uniform(0, 700)),
                }
                for _ in range(reviews // 50)
            ],
        )
        session.commit()


def measure(runs: int, call: Callable[[], object]) -> tuple[float, float]:
    for _ in range(max(5, runs // 10)):  # warm-up: caches, pools, prepared plans
        call()
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="PostgreSQL URL (default: a SQLite file)")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument(
        "--connections",
        type=int,
        default=32,
        help="also serve the data with uvicorn and load /review and /stats with wrk "
        "(this many connections; 0 skips it)",
    )
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, fresh_database(args.database_url, Path(tmp)) as url:
        workdir = Path(tmp)
        began = time.perf_counter()
        content = write_content(workdir / "content", args.items // (1 + FOLLOW_UPS))
        snapshot = Library(content).load()
        print(f"content: {len(snapshot.cards)} cards in {time.perf_counter() - began:.1f} s")

        database = Database(url)
        database.prepare()
        learner = Learner(database.local_user_id, UTC)  # type: ignore[arg-type]
        now = datetime.now(UTC)
        began = time.perf_counter()
        populate(database, learner, args.items, args.reviews, now)
        took = time.perf_counter() - began
        print(f"data: {args.items} items, {args.reviews} log rows in {took:.1f} s")
        began = time.perf_counter()
        with database.session() as session:
            activity.rebuild(session, learner)
            session.commit()
        print(f"activity totals rebuilt from the log in {time.perf_counter() - began:.1f} s")

        # As the server does once started (app/web/app.py): long-lived objects out of the GC.
        gc.collect()
        gc.freeze()
        results: list[tuple[str, float, float]] = []

        def next_item() -> object:
            with database.session() as session:
                return practice.next_item(
                    session, learner, snapshot=snapshot, now=datetime.now(UTC), new_per_day=20
                )

        def build_stats() -> object:
            with database.session() as session:
                return stats.build(session, learner, snapshot=snapshot, now=datetime.now(UTC))

        results.append(("next due item (module)", *measure(args.runs, next_item)))
        results.append(("stats data (module)", *measure(args.runs, build_stats)))
        database.dispose()

        settings = Settings(
            content_dir=content,
            data_dir=workdir / "data",
            database_url=url,
            reload_content=False,
        )
        # Sec-Fetch-Site: what a browser says of a form sent from the site's own page.
        browser = {"Sec-Fetch-Site": "same-origin"}
        with TestClient(create_app(settings), headers=browser) as client:

            def get(path: str) -> Callable[[], object]:
                def call() -> object:
                    response = client.get(path)
                    assert response.status_code == 200, response.text[:500]
                    return response

                return call

            results.append(
                ("GET /review (next due item, page)", *measure(args.runs, get("/review")))
            )
            results.append(("GET /stats (page)", *measure(args.runs, get("/stats"))))

            def grade() -> object:
                page = BeautifulSoup(client.get("/review").text, "html.parser")
                form = {
                    str(i["name"]): str(i.get("value", ""))
                    for i in page.select("form.answer-form input[type=hidden]")
                }
                began = time.perf_counter()
                response = client.post(
                    "/review/grade", data={**form, "rating": "3"}, headers={"HX-Request": "true"}
                )
                assert response.status_code == 200, response.text[:500]
                grade_times.append((time.perf_counter() - began) * 1000)
                return response

            grade_times: list[float] = []
            for _ in range(min(args.runs, 200, args.items // 40)):  # fewer than are due
                grade()
            grade_times.sort()
            results.append(
                (
                    "POST /review/grade + next item (htmx)",
                    statistics.median(grade_times),
                    grade_times[min(len(grade_times) - 1, int(len(grade_times) * 0.99))],
                )
            )
            size = len(client.get("/stats").content)

        if args.connections:
            results += under_load(settings, args.connections, args.duration)

        backend = sqlalchemy.engine.make_url(url).get_backend_name()
        print(
            f"\n{backend}: {args.items} items, {args.reviews} log rows, {args.runs} runs;"
            f" stats page {size // 1024} KB\n"
        )
        print("| what | p50 ms | p99 ms |")
        print("|---|---:|---:|")
        for name, p50, p99 in results:
            print(f"| {name} | {p50:.1f} | {p99:.1f} |")


def under_load(
    settings: Settings, connections: int, duration: int
) -> list[tuple[str, float, float]]:
    """p50 and p99 of /review and /stats from wrk, against `quizlab serve` in its own process."""
    port = 18790
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "QUIZLAB_CONTENT_DIR": str(settings.content_dir),
        "QUIZLAB_DATA_DIR": str(settings.data_dir),
        "QUIZLAB_DATABASE_URL": settings.resolved_database_url,
        "QUIZLAB_WORKER_URL": "http://127.0.0.1:9",  # no torch process on the cores
    }
    command = [sys.executable, "-m", "app", "serve", "--port", str(port), "--no-reload-content"]
    server = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    rows = []
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        for path in ("/review", "/stats"):
            httpx.get(base + path, timeout=30).raise_for_status()
            out = subprocess.run(
                ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", base + path],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
            name = f"GET {path}, {connections} connections ({rps:.0f} req/s)"
            rows.append((name, _wrk_ms(out, "50"), _wrk_ms(out, "99")))
    finally:
        server.terminate()
        server.wait(timeout=10)
    return rows


def _wrk_ms(out: str, percentile: str) -> float:
    match = re.search(rf"^\s+{percentile}%\s+([\d.]+)(us|ms|s)", out, re.M)
    assert match, out
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


if __name__ == "__main__":
    main()

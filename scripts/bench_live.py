"""Benchmark: live demos through the web, uncached and cached.

    .venv/bin/python scripts/bench_live.py [--runs 20]

Starts a real worker subprocess (CPU unless QUIZLAB_WORKER_DEVICE says
otherwise) and the web app in-process, then for every demo at its default
size asks the web app for ``/demos/NAME`` (the full page, which waits for the
worker) three ways: with no cache at all (web -> worker -> page), with the
result in the database but not in memory (a restarted or another web
replica), and with the result in memory. Prints p50 / p95 in ms.
Figures go in docs/performance.md.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="requests per demo and mode")
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from app.demos.catalog import catalog
    from app.live.localworker import LocalWorker
    from app.settings import Settings
    from app.web import create_app

    with LocalWorker() as url, tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), worker_url=url, worker_timeout=60)
        with TestClient(create_app(settings)) as client:
            device = client.get("/demos/softcap").text  # warm up
            print(f"worker {url}; {len(catalog())} demos; {args.runs} runs each\n")
            header = f"{'demo':20s}" + "".join(
                f" {title:>10s} p50 {'p95':>8s}" for title in ("worker", "database", "memory")
            )
            print(header)
            live = client.app.state.live  # type: ignore[attr-defined]
            store = live.store
            for name in catalog():
                times: dict[str, list[float]] = {"worker": [], "database": [], "memory": []}

                def timed(
                    mode: str, name: str = name, times: dict[str, list[float]] = times
                ) -> None:
                    start = time.perf_counter()
                    response = client.get(f"/demos/{name}")
                    times[mode].append((time.perf_counter() - start) * 1000)
                    assert response.status_code == 200, (name, mode, response.status_code)

                live.store = None  # no database: every request goes to the worker
                for _ in range(args.runs):
                    live.forget()
                    timed("worker")
                live.store = store
                live.forget()
                client.get(f"/demos/{name}")  # computes once
                # The demo page keeps learner-picked results in memory only; store
                # this one as a card's live number would be.
                spec, _params, key = live.resolve(name, {})
                store.put(key, name, spec.version, live.cached(key))
                for _ in range(args.runs):
                    live.forget()  # memory empty: read back from the database
                    timed("database")
                for _ in range(args.runs):
                    timed("memory")
                row = "".join(
                    f" {statistics.median(v):10.1f} ms {percentile(v, 0.95):6.1f} ms"
                    for v in times.values()
                )
                print(f"{name:20s}{row}")
            del device


if __name__ == "__main__":
    main()

"""Benchmark: live demos through the web, uncached and cached.

    .venv/bin/python scripts/bench_live.py [--runs 20]

Starts a real worker subprocess (CPU unless QUIZLAB_WORKER_DEVICE says
otherwise) and the web app in-process, then for every demo at its default
size asks the web app for ``/demos/NAME`` (the full page, which waits for the
worker): with the cache emptied before each request (uncached: web -> worker
-> page) and with the result in memory (cached). Prints p50 / p95 in ms.
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

    from app.demos import catalog
    from app.localworker import LocalWorker
    from app.main import create_app
    from app.settings import Settings

    with LocalWorker() as url, tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), worker_url=url, worker_timeout=60)
        with TestClient(create_app(settings)) as client:
            device = client.get("/demos/softcap").text  # warm up
            print(f"worker {url}; {len(catalog())} demos; {args.runs} runs each\n")
            print(f"{'demo':20s} {'uncached p50':>13s} {'p95':>8s} {'cached p50':>11s} {'p95':>8s}")
            for name in catalog():
                uncached, cached = [], []
                live = client.app.state.live  # type: ignore[attr-defined]
                for _ in range(args.runs):
                    live.forget()  # every request goes to the worker
                    start = time.perf_counter()
                    response = client.get(f"/demos/{name}")
                    uncached.append((time.perf_counter() - start) * 1000)
                    assert response.status_code == 200, (name, response.status_code)
                for _ in range(args.runs):
                    start = time.perf_counter()
                    response = client.get(f"/demos/{name}")
                    cached.append((time.perf_counter() - start) * 1000)
                    assert response.status_code == 200
                cold = (
                    f"{statistics.median(uncached):10.1f} ms {percentile(uncached, 0.95):5.1f} ms"
                )
                warm = f"{statistics.median(cached):8.1f} ms {percentile(cached, 0.95):5.1f} ms"
                print(f"{name:20s} {cold} {warm}")
            del device


if __name__ == "__main__":
    main()

"""Benchmark: card page throughput against a precomputed page, and loading 1,000 cards.

    .venv/bin/python scripts/bench_pages.py [--duration 10] [--connections 32]

1. Starts one uvicorn worker (no access log) serving the app plus a baseline
   route that returns the same card page as a precomputed string, then runs
   wrk against each, one after the other in the same run, and prints requests/s,
   p50 and p99 and the ratio (target: the card page at >= 70% of the baseline).
2. Generates 1,000 cards and times loading them cold (parse everything) and
   warm (unchanged files, cached by content hash; target < 2 s).
Needs wrk (apt-get install wrk). Figures go in docs/performance.md.
"""

import argparse
import multiprocessing
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CARD = "attention-scaling-factor"


def serve(port: int, data_dir: str) -> None:
    import uvicorn
    from fastapi.responses import HTMLResponse
    from fastapi.testclient import TestClient

    from app.settings import Settings
    from app.web import create_app

    settings = Settings(data_dir=Path(data_dir), reload_content=False)
    app = create_app(settings)
    with TestClient(create_app(settings)) as client:
        page = client.get(f"/cards/{CARD}").text

    @app.get("/bench/precomputed")
    async def precomputed() -> HTMLResponse:
        return HTMLResponse(page)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def wrk(url: str, duration: int, connections: int) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    def latency(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)", out, re.M)
        assert match, out
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rps,
        "p50": latency("50"),
        "p99": latency("99"),
        "non2xx": float(errors.group(1)) if errors else 0.0,
    }


def throughput(duration: int, connections: int) -> None:
    port = 8765
    data = tempfile.mkdtemp()
    process = multiprocessing.Process(target=serve, args=(port, data), daemon=True)
    process.start()
    import httpx

    for _ in range(200):
        try:
            httpx.get(f"http://127.0.0.1:{port}/bench/precomputed", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    base = f"http://127.0.0.1:{port}"
    wrk(f"{base}/cards/{CARD}", 2, connections)  # warm up
    results = {}
    runs = [
        ("precomputed string", "/bench/precomputed"),
        ("card page", f"/cards/{CARD}"),
        ("precomputed string (again)", "/bench/precomputed"),
        ("card page (again)", f"/cards/{CARD}"),
    ]
    for name, path in runs:
        results[name] = wrk(base + path, duration, connections)
        r = results[name]
        print(
            f"{name:28s} {r['rps']:9.0f} req/s   p50 {r['p50']:6.2f} ms   p99 {r['p99']:6.2f} ms"
            f"   non-2xx {r['non2xx']:.0f}"
        )
    base_rps = sum(r["rps"] for n, r in results.items() if n.startswith("precomputed")) / 2
    card_rps = sum(r["rps"] for n, r in results.items() if n.startswith("card page")) / 2
    print(f"card page / precomputed: {card_rps / base_rps:.0%} (target >= 70%)")
    process.terminate()
    shutil.rmtree(data, ignore_errors=True)


def loading(count: int) -> None:
    from app.content.library import Library

    source = (ROOT / "content" / "attention" / "scaling-factor.md").read_text()
    source = re.sub(r"\[[^\]]*\]\(card:[^)]*\)", "a related card", source)
    with tempfile.TemporaryDirectory() as tmp:
        deck = Path(tmp) / "bench"
        deck.mkdir()
        for i in range(count):
            text = source.replace(f"id: {CARD}", f"id: bench-{i}")
            text = text.replace("deck: attention", "deck: bench")
            text = text.replace("## TL;DR\n", f"## TL;DR\n\nVariant {i}.\n", 1)
            (deck / f"card-{i}.md").write_text(text)
        library = Library(Path(tmp))
        start = time.perf_counter()
        snapshot = library.load()
        cold = time.perf_counter() - start
        assert len(snapshot.cards) == count, snapshot.all_problems()[:3]
        start = time.perf_counter()
        library.load()
        warm = time.perf_counter() - start
        start = time.perf_counter()
        changed = library.changed()
        stat = time.perf_counter() - start
    print(
        f"loading {count} cards: cold {cold:.2f} s, warm {warm:.3f} s (target < 2 s), "
        f"change scan {stat * 1000:.1f} ms (changed={changed})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--cards", type=int, default=1000, help="cards to generate for loading")
    args = parser.parse_args()
    throughput(args.duration, args.connections)
    loading(args.cards)


if __name__ == "__main__":
    main()

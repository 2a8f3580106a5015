"""Benchmark: importing a progress file through the stats page, time and server memory.

    .venv/bin/python scripts/bench_import.py [--reviews 10000 40000] [--answer-chars 200]

For each size, writes an export with that many reviews (each with a typed
answer of --answer-chars characters), starts a fresh ``quizlab serve`` on the
two test cards (no worker), uploads the file as the stats page's form does,
then uploads it again (everything already there). Prints the file size, both
times, and the server's peak resident memory before and after (VmHWM, Linux).
The upload limit in app/web/middleware/csrf.py is chosen from these figures; they go in
docs/performance.md.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cardtext import GOOD_CARD, OTHER_CARD  # noqa: E402
from tests.conftest import csrf_token_of, free_port, healthy_within  # noqa: E402

# What a browser says of a form sent from the site's own page (docs/security.md, Sessions).
BROWSER = {"Sec-Fetch-Site": "same-origin"}

ITEMS = ["test-other", "test-other/why-exp", "test-scaling", "test-scaling/why-sqrt"]


def export_text(reviews: int, answer_chars: int) -> bytes:
    rng = random.Random(reviews)
    start = time.time() - reviews * 600
    records = []
    for n in range(reviews):
        card, _, follow_up = rng.choice(ITEMS).partition("/")
        at = time.gmtime(start + n * 600)
        records.append(
            {
                "uid": f"{n:032x}",
                "card_id": card,
                "follow_up": follow_up,
                "rating": rng.choice([1, 2, 3, 4]),
                "answer": "x" * answer_chars,
                "duration_ms": 1000,
                "reviewed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", at),
                "practice": False,
            }
        )
    document = {"format": "quizlab-progress", "version": 1, "reviews": records, "choices": []}
    return json.dumps(document).encode()


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM: this benchmark reads Linux's /proc")


def run(reviews: int, answer_chars: int, root: Path) -> None:
    body = export_text(reviews, answer_chars)
    content = root / f"content-{reviews}" / "testdeck"
    content.mkdir(parents=True)
    (content / "scaling.md").write_text(GOOD_CARD)
    (content / "other.md").write_text(OTHER_CARD)
    port = free_port()
    env = {
        **os.environ,
        "QUIZLAB_CONTENT_DIR": str(content.parent),
        "QUIZLAB_DATA_DIR": str(root / f"data-{reviews}"),
        "QUIZLAB_WORKER_URL": "http://127.0.0.1:9",  # no worker: none is needed here
    }
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/quizlab"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy_within(url, 30):
            raise SystemExit("the server did not start")
        with httpx.Client(base_url=url, timeout=600, headers=BROWSER) as client:
            client.get("/stats")
            before = peak_mb(server.pid)
            times = []
            for _ in range(2):
                form = {"csrf_token": (None, csrf_token_of(client)), "file": ("p.json", body)}
                started = time.perf_counter()
                response = client.post("/stats/import", files=form)
                times.append(time.perf_counter() - started)
                if response.status_code != 200:
                    raise SystemExit(f"import refused: {response.status_code} {response.text}")
        print(
            f"{reviews:>8,} reviews {len(body) / 1e6:6.1f} MB: import {times[0]:5.1f} s, "
            f"again {times[1]:5.1f} s; server peak RSS {before:4.0f} MB before, "
            f"{peak_mb(server.pid):4.0f} MB after"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, nargs="+", default=[10_000, 40_000])
    parser.add_argument("--answer-chars", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for reviews in args.reviews:
            run(reviews, args.answer_chars, Path(folder))


if __name__ == "__main__":
    main()

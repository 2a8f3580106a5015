"""Benchmark: the card page against bare servers of the same bytes, and loading 1,000 cards.

    .venv/bin/python scripts/bench_pages.py [--duration 8] [--connections 32] [--rounds 2]

1. Throughput. Starts, each in its own process:
   - ``quizlab serve`` as a user runs it (content reloading on; no demo worker,
     so no torch competes for the cores: the card page never waits on it);
   - a bare FastAPI app (no middleware) returning the card page's bytes;
   - the same bare app behind Starlette's ``GZipMiddleware``;
   - nginx serving the same file (and its ``.gz`` with ``gzip_static``), when
     nginx is installed.
   wrk runs against each in turn, ``--rounds`` times, without and with
   ``Accept-Encoding: gzip``; quizlab is measured both as a new visitor (no
   cookie: every response makes and signs a session) and as a returning one
   (the cookie sent back). Prints req/s, p50, p99 and the ratios.
2. Loading: generates ``--cards`` copies of the longest card and times a cold
   load (parse everything, filling the disk cache), a restart (a new library
   on the same files and cache; target < 2 s), and the CPU an edit costs
   (one file re-read through :meth:`Library.update`).
Needs wrk (apt-get install wrk). Figures go in docs/performance.md.
"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CARD = "attention-scaling-factor"
GZIP = {"Accept-Encoding": "gzip"}


def bare_app(page_file: str, middleware: str) -> None:
    """The baseline: a FastAPI app returning ``page_file``'s bytes (run in its own process)."""
    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.middleware.gzip import GZipMiddleware
    from fastapi.responses import Response

    page = Path(page_file).read_bytes()
    zipped = gzip.compress(page, 9)
    app = FastAPI()

    @app.get("/page")
    async def plain() -> Response:
        return Response(page, media_type="text/html")

    @app.get("/precompressed")
    async def precompressed(request: Request) -> Response:
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(zipped, media_type="text/html", headers={"Content-Encoding": "gzip"})
        return Response(page, media_type="text/html")

    if middleware == "gzip":
        app.add_middleware(GZipMiddleware, minimum_size=500)
    port = int(os.environ["BENCH_PORT"])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def wrk(url: str, duration: int, connections: int, headers: dict[str, str]) -> dict[str, float]:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout

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


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def start(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def nginx(folder: Path, port: int) -> subprocess.Popen[bytes] | None:
    binary = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if binary is None:
        return None
    (folder / "logs").mkdir()
    (folder / "nginx.conf").write_text(
        f"""worker_processes 1; daemon off; pid {folder}/nginx.pid;
error_log {folder}/logs/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;
  client_body_temp_path {folder}/tmp; proxy_temp_path {folder}/tmp; fastcgi_temp_path {folder}/tmp;
  uwsgi_temp_path {folder}/tmp; scgi_temp_path {folder}/tmp;
  types {{ text/html html; }}
  server {{ listen 127.0.0.1:{port}; root {folder}/www; gzip_static on; }} }}
"""
    )
    return start([binary, "-c", str(folder / "nginx.conf"), "-p", str(folder)], {})


def throughput(duration: int, connections: int, rounds: int) -> None:
    work = Path(tempfile.mkdtemp())
    work.chmod(0o755)  # nginx workers run as another user
    ports = {name: 18760 + i for i, name in enumerate(["quizlab", "bare", "bare-gzip", "nginx"])}
    python = sys.executable
    env = {"PYTHONPATH": str(ROOT), "QUIZLAB_DATA_DIR": str(work / "data")}
    # A worker URL where nothing listens: no torch process; pages show the number as pending.
    env["QUIZLAB_WORKER_URL"] = "http://127.0.0.1:9"
    processes = [
        start([python, "-m", "app", "serve", "--port", str(ports["quizlab"])], env),
    ]
    quizlab = f"http://127.0.0.1:{ports['quizlab']}"
    try:
        wait_for(f"{quizlab}/healthz")
        with httpx.Client(base_url=quizlab) as client:
            page = client.get(f"/cards/{CARD}").content  # as one visitor gets it
            # A returning visitor has sent a form once (revealing an answer): only that
            # starts a session and its cookie (docs/security.md, Sessions).
            token = re.search(rb'<meta name="csrf-token" content="([^"]+)">', page)
            assert token is not None
            revealed = client.post(
                f"/cards/{CARD}/reveal",
                headers={"X-CSRF-Token": token.group(1).decode(), "Sec-Fetch-Site": "same-origin"},
            )
            assert revealed.status_code == 200 and client.cookies, revealed.status_code
            cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
        (work / "www").mkdir()
        (work / "www" / "page.html").write_bytes(page)
        (work / "www" / "page.html.gz").write_bytes(gzip.compress(page, 9))
        for name, middleware in (("bare", "none"), ("bare-gzip", "gzip")):
            processes.append(
                start(
                    [python, __file__, "--bare", str(work / "www" / "page.html"), middleware],
                    {**env, "BENCH_PORT": str(ports[name])},
                )
            )
        server = nginx(work, ports["nginx"])
        if server is not None:
            processes.append(server)
            try:
                wait_for(f"http://127.0.0.1:{ports['nginx']}/page.html", 10)
            except RuntimeError:
                print((work / "logs" / "error.log").read_text(), file=sys.stderr)
                raise
        for name in ("bare", "bare-gzip"):
            wait_for(f"http://127.0.0.1:{ports[name]}/page")
        runs = _runs(ports, cookie, server is not None)
        for _, url, headers in runs:  # warm up, and check every server sends the page
            response = httpx.get(url, headers=headers)
            assert response.status_code == 200 and len(response.text) > 1000, (url, response)
            wrk(url, 1, connections, headers)
        _measure(runs, duration, connections, rounds)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


Run = tuple[str, str, dict[str, str]]  # name, URL, request headers


def _runs(ports: dict[str, int], cookie: str, with_nginx: bool) -> list[Run]:
    def url(name: str, path: str) -> str:
        return f"http://127.0.0.1:{ports[name]}{path}"

    card = f"/cards/{CARD}"
    returning = {"Cookie": cookie}
    runs = [
        ("bare", url("bare", "/page"), {}),
        ("quizlab, new visitor", url("quizlab", card), {}),
        ("quizlab, returning", url("quizlab", card), returning),
        ("gzip: bare + GZipMiddleware", url("bare-gzip", "/page"), GZIP),
        ("gzip: bare, precompressed", url("bare", "/precompressed"), GZIP),
        ("gzip: quizlab, new visitor", url("quizlab", card), GZIP),
        ("gzip: quizlab, returning", url("quizlab", card), {**GZIP, **returning}),
    ]
    if with_nginx:
        runs += [
            ("nginx", url("nginx", "/page.html"), {}),
            ("gzip: nginx", url("nginx", "/page.html"), GZIP),
        ]
    return runs


def _measure(runs: list[Run], duration: int, connections: int, rounds: int) -> None:
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in runs}
    for round_ in range(rounds):
        for name, url, headers in runs:
            r = wrk(url, duration, connections, headers)
            results[name].append(r)
            print(
                f"[{round_ + 1}] {name:30s} {r['rps']:9.0f} req/s   p50 {r['p50']:6.2f} ms"
                f"   p99 {r['p99']:6.2f} ms   non-2xx {r['non2xx']:.0f}",
                flush=True,
            )
    mean = {name: sum(r["rps"] for r in rs) / len(rs) for name, rs in results.items()}
    worst_p99 = {name: max(r["p99"] for r in rs) for name, rs in results.items()}
    print(f"\nmean of {rounds} rounds, {connections} connections:")
    for name in results:
        print(f"  {name:30s} {mean[name]:9.0f} req/s   worst p99 {worst_p99[name]:6.2f} ms")
    ratios = [
        ("quizlab, new visitor", "bare"),
        ("quizlab, returning", "bare"),
        ("gzip: quizlab, new visitor", "gzip: bare + GZipMiddleware"),
        ("gzip: quizlab, returning", "gzip: bare + GZipMiddleware"),
        ("gzip: quizlab, new visitor", "gzip: bare, precompressed"),
        ("gzip: quizlab, returning", "gzip: bare, precompressed"),
        ("bare", "nginx"),
        ("quizlab, returning", "nginx"),
    ]
    print("ratios (target: quizlab >= 70% of the bare app):")
    for mine, base in ratios:
        if mine in mean and base in mean:
            print(f"  {mine:30s} / {base:28s} {mean[mine] / mean[base]:6.0%}")


def loading(count: int) -> None:
    from app.content.library import Library

    source = (ROOT / "content" / "attention" / "scaling-factor.md").read_text()
    source = re.sub(r"\[[^\]]*\]\(card:[^)]*\)", "a related card", source)
    with tempfile.TemporaryDirectory() as tmp:
        deck = Path(tmp) / "content" / "bench"
        deck.mkdir(parents=True)
        for i in range(count):
            text = source.replace(f"id: {CARD}", f"id: bench-{i}")
            text = text.replace("deck: attention", "deck: bench")
            text = text.replace("## TL;DR\n", f"## TL;DR\n\nVariant {i}.\n", 1)
            (deck / f"card-{i}.md").write_text(text)
        cache = Path(tmp) / "data" / "cache" / "cards"
        start = time.perf_counter()
        snapshot = Library(deck.parent, cache_dir=cache).load()
        cold = time.perf_counter() - start
        assert len(snapshot.cards) == count, snapshot.all_problems()[:3]
        start = time.perf_counter()
        library = Library(deck.parent, cache_dir=cache)
        assert len(library.load().cards) == count
        restart = time.perf_counter() - start
        edited = deck / "card-7.md"
        edited.write_text(edited.read_text().replace("Variant 7.", "Variant seven."))
        cpu = time.process_time()
        library.update([edited])
        edit = time.process_time() - cpu
        cpu = time.process_time()
        library.update([deck / "card-8.md"])  # saved unchanged: no parse, only the checks
        touch = time.process_time() - cpu
    print(
        f"loading {count} cards: cold {cold:.2f} s; restart (disk cache) {restart:.2f} s "
        f"(target < 2 s); one edited file {edit * 1000:.1f} ms CPU; one file saved unchanged "
        f"{touch * 1000:.1f} ms CPU (target < 5 ms)"
    )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--bare":
        bare_app(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=2, help="times each server is measured")
    parser.add_argument("--cards", type=int, default=1000, help="cards to generate for loading")
    parser.add_argument("--skip-loading", action="store_true", help="throughput only")
    parser.add_argument("--skip-throughput", action="store_true", help="loading only")
    args = parser.parse_args()
    if not args.skip_throughput:
        throughput(args.duration, args.connections, args.rounds)
    if not args.skip_loading:
        loading(args.cards)


if __name__ == "__main__":
    main()

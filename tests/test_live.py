"""Live numbers end to end: the web app and a real worker subprocess, and worker faults.

Faults are injected with small fake workers (one that is too slow, one that
answers 500) and a port nobody listens on; everything else is the real thing.
"""

import asyncio
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from bs4 import BeautifulSoup
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from tests.cardtext import GOOD_CARD, line_of
from tests.conftest import CSRFClient, free_port

HX = {"HX-Request": "true"}

LIVE_CARD = GOOD_CARD.replace(
    "Llama 3 70B.",
    "Unscaled, the variance is {live}`score_variance.variance(d_k=128, divisor=none) = 128 ± 5%`; "
    "scaled it is {live}`score_variance.variance(d_k=128, divisor=sqrt_dk) = 1 ± 0.05`.\n\n"
    "```demo score_variance\nd_k: 64\nsamples: 5000\n```",
)


@pytest.fixture
def live_content(content_dir: Path) -> Path:
    """The test content, with live numbers and a demo in the scaling card."""
    (content_dir / "testdeck" / "scaling.md").write_text(LIVE_CARD)
    return content_dir


def make_client(
    tmp_path: Path, content: Path, worker_url: str | None, **extra: float
) -> TestClient:
    settings = Settings(
        content_dir=content, data_dir=tmp_path / "data", worker_url=worker_url, **extra
    )
    return CSRFClient(create_app(settings))


def badges(html: str) -> list[tuple[str, str]]:
    page = BeautifulSoup(html, "html.parser")
    return [
        (span.select_one(".live-claim").get_text(), span.select_one(".badge").get_text())  # type: ignore[union-attr]
        for span in page.select("span.live")
    ]


def test_badges_come_from_the_worker_then_from_the_cache(
    tmp_path: Path, live_content: Path, worker_url: str
) -> None:
    with make_client(tmp_path, live_content, worker_url) as client:
        first = client.post("/cards/test-scaling/reveal", headers=HX)
        assert [b for _, b in badges(first.text)] == ["not yet run", "not yet run"]
        trigger = BeautifulSoup(first.text, "html.parser").select_one("[hx-trigger=load][hx-get]")
        assert trigger is not None and trigger["hx-get"] == "/cards/test-scaling/live"

        live = client.get("/cards/test-scaling/live", headers=HX)
        assert live.status_code == 200
        oob = BeautifulSoup(live.text, "html.parser").select("span.live[hx-swap-oob=true]")
        assert [s["id"] for s in oob] == ["live-test-scaling-0", "live-test-scaling-1"]
        results = badges(live.text)
        assert [claim for claim, _ in results] == ["128", "1"]
        assert all(badge.startswith("checked: ") for _, badge in results), results
        measured = float(results[0][1].removeprefix("checked: "))
        assert abs(measured - 128) <= 0.05 * 128

        again = client.post("/cards/test-scaling/reveal", headers=HX)
        assert badges(again.text) == results  # from the cache, no worker call needed
        assert (
            BeautifulSoup(again.text, "html.parser").select_one("[hx-trigger=load][hx-get]") is None
        )


def test_a_wrong_claim_is_marked_differs(
    tmp_path: Path, content_dir: Path, worker_url: str
) -> None:
    wrong = LIVE_CARD.replace("= 128 ± 5%", "= 64 ± 5%")
    (content_dir / "testdeck" / "scaling.md").write_text(wrong)
    with make_client(tmp_path, content_dir, worker_url) as client:
        live = client.get("/cards/test-scaling/live", headers=HX)
        badge = BeautifulSoup(live.text, "html.parser").select_one("#live-test-scaling-0 .badge")
        assert badge is not None and badge.get_text().startswith("differs: ")
        assert badge["title"].startswith("claimed 64, measured 1")  # type: ignore[union-attr]


def test_embedded_demo_has_labelled_controls_and_updates(
    tmp_path: Path, live_content: Path, worker_url: str
) -> None:
    with make_client(tmp_path, live_content, worker_url) as client:
        page = BeautifulSoup(
            client.post("/cards/test-scaling/reveal", headers=HX).text, "html.parser"
        )
        demo = page.select_one("figure.demo#demo-test-scaling-0")
        assert demo is not None
        for control in demo.select("input:not([type=hidden]), select"):
            assert demo.select_one(f"label[for={control['id']}]") is not None
        d_k = demo.select_one("input[name=d_k]")
        assert d_k is not None and d_k["value"] == "64" and d_k["max"] == "4096"
        status = demo.select_one(".demo-status[hx-trigger]")
        assert status is not None  # stands in for the result until it is computed

        url = "/demos/score_variance?d_k=32&divisor=none&samples=5000&_slot=demo-test-scaling-0"
        answer = client.get(url, headers=HX)
        deadline = time.monotonic() + 30
        while "demo-status" in answer.text:
            assert time.monotonic() < deadline
            time.sleep(0.2)
            answer = client.get(url, headers=HX)
        result = BeautifulSoup(answer.text, "html.parser")
        rows = {
            tr.th.get_text(): tr.select("td")  # type: ignore[union-attr]
            for tr in result.select("table.demo-numbers tbody tr")
        }
        assert float(rows["variance"][1].get_text()) == 32  # theory: d_k / 1²
        assert abs(float(rows["variance"][0].get_text()) - 32) < 0.1 * 32
        svg = result.select_one("svg.chart[role=img]")
        assert svg is not None and svg.select_one("title") and svg.select_one("desc")


def test_demo_page_without_javascript(tmp_path: Path, live_content: Path, worker_url: str) -> None:
    with make_client(tmp_path, live_content, worker_url) as client:
        page = client.get("/demos/rope?d=64&samples=2000")
        assert page.status_code == 200
        soup = BeautifulSoup(page.text, "html.parser")
        assert soup.select_one("h1") is not None and soup.select_one("table.demo-numbers")


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        # The same messages as the worker's 422 (one spec, app/demos/specs/variance.py).
        ("d_k=5000", 422, "d_k must be an integer between 1 and 4096, got 5000"),
        ("d_k=abc", 422, 'd_k must be an integer between 1 and 4096, got "abc"'),
        ("d_k=true", 422, 'd_k must be an integer between 1 and 4096, got "true"'),
        ("divisor=seven", 422, 'divisor must be one of "none", "sqrt_dk", "dk", "sqrt_dmodel"'),
        ("dk=12", 422, "unknown parameter 'dk': score_variance takes d_k, samples"),
    ],
)
def test_bad_demo_parameters_are_422_naming_the_bounds(
    client: TestClient, query: str, status: int, message: str
) -> None:
    response = client.get(f"/demos/score_variance?{query}", headers=HX)
    assert response.status_code == status
    assert message in BeautifulSoup(response.text, "html.parser").get_text()


def test_unknown_demo_is_404(client: TestClient) -> None:
    assert client.get("/demos/no_such_demo").status_code == 404


class FakeWorker:
    """A worker that misbehaves on purpose, served by uvicorn on a free port."""

    def __init__(self, behaviour: str) -> None:
        app = FastAPI()

        @app.post("/demos/{name}")
        async def run(name: str) -> JSONResponse:
            if behaviour == "slow":
                await asyncio.sleep(5)
            return JSONResponse({"detail": "boom"}, status_code=500)

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(params=["slow", "error-500", "refused"])
def faulty_worker(request: pytest.FixtureRequest) -> Iterator[str]:
    """A worker URL that times out, answers 500, or refuses connections."""
    if request.param == "refused":
        yield f"http://127.0.0.1:{free_port()}"
        return
    with FakeWorker(request.param) as url:
        yield url


def test_worker_faults_never_break_the_card(
    tmp_path: Path, live_content: Path, faulty_worker: str
) -> None:
    with make_client(tmp_path, live_content, faulty_worker, worker_timeout=0.5) as client:
        page = client.post("/cards/test-scaling/reveal")
        assert page.status_code == 200
        soup = BeautifulSoup(page.text, "html.parser")
        assert soup.select_one("#deep-dive") is not None  # the authored text is all there

        started = time.monotonic()
        live = client.get("/cards/test-scaling/live", headers=HX)
        assert live.status_code == 200
        assert time.monotonic() - started < 4  # the timeout holds; no 5 s hang
        assert [b for _, b in badges(live.text)] == ["live check unavailable"] * 2

        demo = client.get("/demos/score_variance?d_k=8", headers=HX)
        deadline = time.monotonic() + 10
        while demo.status_code == 200 and "demo-status" in demo.text:
            assert time.monotonic() < deadline
            time.sleep(0.1)
            demo = client.get("/demos/score_variance?d_k=8", headers=HX)
        assert demo.status_code == 503
        assert "The demo could not run:" in demo.text
        full = client.get("/demos/score_variance?d_k=8")
        assert full.status_code == 503


def test_check_run_demos_reports_claim_and_measurement(
    tmp_path: Path, content_dir: Path, worker_url: str
) -> None:
    wrong = LIVE_CARD.replace("= 1 ± 0.05", "= 2 ± 0.05")
    card = content_dir / "testdeck" / "scaling.md"
    card.write_text(wrong)
    result = subprocess.run(
        [sys.executable, "-m", "app", "check", "--run-demos", str(content_dir)],
        capture_output=True,
        text=True,
        cwd=content_dir.parent,
        env={"QUIZLAB_WORKER_URL": worker_url, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    line = line_of(wrong, "= 2 ± 0.05")
    # The test cards are below the deck standard: those lines are warnings.
    [message] = [m for m in result.stdout.splitlines() if ": warning: " not in m]
    match = re.fullmatch(
        rf"content/testdeck/scaling.md:{line}: claimed 2, measured ([\d.]+) \(tolerance 0.05\)",
        message,
    )
    assert match is not None, message
    assert abs(float(match.group(1)) - 1) < 0.05


def test_check_flags_unknown_demo_output_and_parameter(tmp_path: Path) -> None:
    from app.content.parse import parse_card

    text = LIVE_CARD.replace(
        "score_variance.variance(d_k=128, divisor=none)", "score_variance.varience(d_k=128)"
    )
    text = text.replace("divisor=sqrt_dk) = 1", "divisor=sqrt_dk, heads=3) = 1")
    text = text.replace("```demo score_variance", "```demo no_such_demo")
    messages = [p.message for p in parse_card(text, "content/testdeck/scaling.md").problems]
    assert messages[0].startswith(
        "live number: demo 'score_variance' has no output 'varience': "
        "did you mean 'score_variance.variance'? (outputs: variance,"
    )
    assert messages[1].startswith(
        "live number: unknown parameter 'heads': score_variance takes d_k, samples"
    )
    assert messages[2].startswith(
        "demo block: unknown demo 'no_such_demo': the demos are score_variance,"
    )


def test_results_survive_a_restart_in_the_database(
    tmp_path: Path, live_content: Path, worker_url: str
) -> None:
    with make_client(tmp_path, live_content, worker_url) as client:
        first = badges(client.get("/cards/test-scaling/live", headers=HX).text)
        assert all(badge.startswith("checked") for _, badge in first)
    # Restarted with no worker at all: the numbers still come from the cache table.
    with make_client(tmp_path, live_content, None) as client:
        again = badges(client.get("/cards/test-scaling/live", headers=HX).text)
    assert again == first


def test_learner_picked_demo_results_are_not_stored(
    tmp_path: Path, live_content: Path, worker_url: str
) -> None:
    from sqlalchemy import func, select

    from app.storage.models import DemoResult

    with make_client(tmp_path, live_content, worker_url) as client:
        for seed in (11, 12, 13):
            assert client.get(f"/demos/softcap?x={seed}").status_code == 200
        database = client.app.state.db  # type: ignore[attr-defined]
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(DemoResult)) == 0
        client.get("/cards/test-scaling/live", headers=HX)  # a card's live numbers are
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(DemoResult)) == 2

"""The worker's HTTP API, as the web app uses it."""

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app.demos.params import DemoParams
from app.settings import get_settings
from app.worker.api import create_worker_app, get_runner
from app.worker.demo import Demo, DemoResult
from app.worker.demos import DEMOS
from app.worker.runner import WorkerBusy


def test_health(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "torch": torch.__version__,
        "device": "cpu",
        "demos": list(DEMOS),
    }


def test_start_up_warms_every_demo_up() -> None:
    with TestClient(create_worker_app(device="cpu", warm_up=True)) as test_client:
        assert test_client.get("/health").status_code == 200


def test_demo_list_describes_every_parameter(client: TestClient) -> None:
    response = client.get("/demos")
    assert response.status_code == 200
    listed = {demo["name"]: demo for demo in response.json()}
    assert list(listed) == list(DEMOS)
    score = listed["score_variance"]
    assert set(score) == {
        "name",
        "version",
        "title",
        "description",
        "seeded",
        "params",
        "outputs",
    }
    assert score["seeded"] is True
    assert score["params"][0] == {
        "name": "d_k",
        "type": "integer",
        "default": 128,
        "minimum": 1,
        "maximum": 4096,
        "choices": None,
        "label": "d_k",
        "description": "Components in each query and key vector.",
    }
    divisor = next(p for p in score["params"] if p["name"] == "divisor")
    assert divisor["type"] == "string"
    assert divisor["choices"] == ["none", "sqrt_dk", "dk", "sqrt_dmodel"]
    assert "variance" in score["outputs"]
    assert listed["divisor"]["seeded"] is False


def test_one_demo_description(client: TestClient) -> None:
    response = client.get("/demos/rope")
    assert response.status_code == 200
    assert response.json()["name"] == "rope"


def test_run_with_defaults(client: TestClient) -> None:
    response = client.post("/demos/softcap")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "demo",
        "version",
        "params",
        "device",
        "outputs",
        "theory",
        "series",
        "notes",
        "elapsed_ms",
    }
    assert body["params"] == {"cap": 50.0, "x": 100.0}
    assert body["outputs"]["capped"] == pytest.approx(48.2014, abs=1e-4)
    assert set(body["series"][0]) == {"name", "kind", "x", "y", "x_label", "y_label"}


def test_run_with_params_echoes_them_and_the_seed(client: TestClient) -> None:
    response = client.post("/demos/score_variance", json={"d_k": 16, "samples": 500, "seed": 3})
    assert response.status_code == 200
    assert response.json()["params"] == {
        "d_k": 16,
        "samples": 500,
        "divisor": "sqrt_dk",
        "num_heads": 64,
        "seed": 3,
    }


def test_same_request_same_numbers(client: TestClient) -> None:
    params = {"d_k": 16, "samples": 500, "seed": 3}
    first = client.post("/demos/score_variance", json=params).json()
    second = client.post("/demos/score_variance", json=params).json()
    assert first["outputs"] == second["outputs"]


def test_unknown_demo_is_404_listing_the_demos(client: TestClient) -> None:
    for response in (client.post("/demos/attention"), client.get("/demos/attention")):
        assert response.status_code == 404
        assert response.json() == {
            "detail": "unknown demo 'attention': the demos are " + ", ".join(DEMOS),
            "demos": list(DEMOS),
        }


def test_out_of_bounds_is_422_naming_parameter_and_bounds(client: TestClient) -> None:
    response = client.post("/demos/score_variance", json={"d_k": 5000})
    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {"param": "d_k", "message": "d_k must be an integer between 1 and 4096, got 5000"}
        ]
    }


def test_wrong_type_is_422(client: TestClient) -> None:
    response = client.post("/demos/softmax_saturation", json={"rows": "many"})
    assert response.status_code == 422
    assert response.json()["detail"] == [
        {"param": "rows", "message": 'rows must be an integer between 10 and 5000, got "many"'}
    ]


def test_extra_parameter_is_422(client: TestClient) -> None:
    response = client.post("/demos/softcap", json={"cap": 30, "temperature": 2})
    assert response.status_code == 422
    assert response.json()["detail"] == [
        {"param": "temperature", "message": "unknown parameter 'temperature': softcap takes cap, x"}
    ]


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"d_k"'])
def test_body_that_is_not_a_json_object_is_422(client: TestClient, body: bytes) -> None:
    response = client.post(
        "/demos/softcap", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["param"] is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"cap": ' + b"9" * 5000 + b"}", "a number longer than 30 digits"),
        (b'{"cap": ' + b"[" * 10_000 + b"}", "nested more than 8 levels deep"),
        (b'{"cap": "\xff"}', "not UTF-8"),
        (b'{"cap": "' + b"x" * 70_000 + b'"}', "larger than 65536 bytes"),
    ],
)
def test_a_hostile_body_is_422_and_the_next_request_is_served(
    client: TestClient, body: bytes, message: str
) -> None:
    response = client.post(
        "/demos/softcap", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code in (413, 422)
    [problem] = response.json()["detail"]
    assert problem["param"] is None
    assert message in problem["message"]
    assert client.post("/demos/softcap", json={"cap": 30}).status_code == 200


class BusyRunner:
    """A runner whose queue is always full."""

    async def run(self, demo: Demo[Any], params: DemoParams) -> DemoResult:
        raise WorkerBusy("the worker is busy (1 running, 16 waiting): try again in a moment")


@pytest.fixture
def busy_client() -> Iterator[TestClient]:
    """A worker whose queue is full."""
    app = create_worker_app(device="cpu", warm_up=False)
    app.dependency_overrides[get_runner] = BusyRunner
    with TestClient(app) as test_client:
        yield test_client


def test_full_queue_is_503_with_retry_after(busy_client: TestClient) -> None:
    response = busy_client.post("/demos/softcap")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert "try again" in response.json()["detail"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_asking_for_cuda_without_a_gpu_fails_at_start_up() -> None:
    with (
        pytest.raises(RuntimeError, match="QUIZLAB_WORKER_DEVICE=cuda but torch sees no GPU"),
        TestClient(create_worker_app(device="cuda", warm_up=False)),
    ):
        pass


def test_auto_device_follows_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZLAB_WORKER_DEVICE", "auto")
    get_settings.cache_clear()
    try:
        with TestClient(create_worker_app(warm_up=False)) as test_client:
            device = test_client.get("/health").json()["device"]
    finally:
        get_settings.cache_clear()
    assert device == ("cuda" if torch.cuda.is_available() else "cpu")

"""schemathesis: the JSON endpoints of the web app and the worker, fuzzed from their OpenAPI schemas.

No generated request may get a 5xx or an answer that breaks the schema. The
web app's JSON endpoints are the health check and the progress download (the
other routes are HTML pages); the worker's are its health, its demo list and
each demo's description. Running a demo (POST /demos/{name}) is covered by
tests/worker/test_params.py, where every bound is checked by hand: fuzzing it
would mostly measure torch.
"""

from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.python import asgi

from app.settings import Settings
from app.web import create_app

WEB_JSON = "^/(healthz|progress)$"
WORKER_JSON = "^/(health|demos|demos/{name})$"
CHECKS = hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.fixture
def web_app(settings: Settings) -> FastAPI:
    """The web app on the test content."""
    return create_app(settings)


@pytest.fixture
def worker_app() -> FastAPI:
    """The worker on the CPU."""
    from app.worker.api import create_worker_app

    return create_worker_app(device="cpu", warm_up=False)


def check_every_operation(app: FastAPI, schema: Any) -> set[str]:
    """Fuzz each operation of ``schema`` against ``app``; returns the paths checked."""
    checked = set()
    with asgi.get_client(app) as client:  # one lifespan for every call
        for result in schema.get_all_operations():
            operation = result.ok()

            @given(case=operation.as_strategy())
            @CHECKS
            def check(case: schemathesis.Case) -> None:
                case.call_and_validate(session=client)

            check()
            checked.add(operation.path)
    return checked


def test_web_json_endpoints_follow_their_schema(web_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", web_app).include(path_regex=WEB_JSON)
    assert check_every_operation(web_app, schema) == {"/healthz", "/progress"}


def test_worker_endpoints_follow_their_schema(worker_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", worker_app).include(
        path_regex=WORKER_JSON, method="GET"
    )
    assert check_every_operation(worker_app, schema) == {"/health", "/demos", "/demos/{name}"}

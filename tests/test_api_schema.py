"""schemathesis: every route of the web app, and the worker's JSON API, fuzzed from their OpenAPI schemas.

No generated request may get a 5xx, a status code or content type its route
does not document, or an answer that breaks its schema (#12 item 9): the web
app's pages document their HTML errors (app/web/responses.py), in both modes,
signed in as an admin in accounts mode. The worker's health, demo list and
each demo's description are fuzzed; running a demo (POST /demos/{name}) is
covered by tests/worker/test_params.py, where every bound is checked by hand
(fuzzing it would mostly measure torch), and its error bodies are checked
against their declared schemas below.
"""

from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from pydantic import TypeAdapter
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.accounts import users as accounts
from app.accounts.limits import LoginLimiter
from app.settings import Settings
from app.web import create_app
from tests.conftest import csrf_token_of

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


def check_every_operation(
    app: FastAPI, schema: Any, *, sign_in: Any = None, headers: Any = None
) -> set[str]:
    """Fuzz each operation of ``schema`` against ``app``; returns the paths checked.

    ``sign_in(client)`` runs before each request; ``headers(client)`` adds headers.
    A schema-valid request may still be refused for what it means (a wrong
    password, an item not in the content): that 4xx is by design, so the
    check that expects schema-valid data to be accepted is left out.
    """
    checked = set()
    with asgi.get_client(app) as client:  # one lifespan for every call
        for result in schema.get_all_operations():
            operation = result.ok()

            @given(case=operation.as_strategy())
            @CHECKS
            def check(case: schemathesis.Case) -> None:
                if sign_in is not None:
                    sign_in(client)
                case.call_and_validate(
                    session=client,
                    headers=headers(client) if headers is not None else None,
                    excluded_checks=[positive_data_acceptance],
                )

            check()
            checked.add(operation.path)
    return checked


def paths_of(app: FastAPI) -> set[str]:
    return set(app.openapi()["paths"])


def test_every_web_route_documents_what_it_answers(web_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", web_app)

    def csrf(client: Any) -> dict[str, str]:
        return {"X-CSRF-Token": csrf_token_of(client), "Sec-Fetch-Site": "same-origin"}

    assert check_every_operation(web_app, schema, headers=csrf) == paths_of(web_app)


def test_every_route_in_accounts_mode_documents_what_it_answers(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"auth": "accounts"}))
    app.state.login_limiter = LoginLimiter(account_limit=10**6, address_limit=10**6)
    password = "correct horse battery"

    def sign_in(client: Any) -> None:
        if not getattr(app.state, "ada", False):
            with app.state.db.session() as session:
                accounts.create_user(
                    session, name="ada", password=password, is_admin=True, now=accounts.now_utc()
                )
            app.state.ada = True
        if client.get("/account", allow_redirects=False).status_code != 200:
            form = {"name": "ada", "password": password, "csrf_token": csrf_token_of(client)}
            client.post("/login", data=form, headers={"Sec-Fetch-Site": "same-origin"})

    # Behind sign-in, /openapi.json too: the schema is read from the app itself.
    schema = schemathesis.openapi.from_dict(app.openapi())
    checked = check_every_operation(
        app,
        schema,
        sign_in=sign_in,
        headers=lambda client: {
            "X-CSRF-Token": csrf_token_of(client),
            "Sec-Fetch-Site": "same-origin",
        },
    )
    assert checked == paths_of(app)


def test_web_json_endpoints_follow_their_schema(web_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", web_app).include(path_regex=WEB_JSON)
    assert check_every_operation(web_app, schema) == {"/healthz", "/progress"}


def test_worker_endpoints_follow_their_schema(worker_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", worker_app).include(
        path_regex=WORKER_JSON, method="GET"
    )
    assert check_every_operation(worker_app, schema) == {"/health", "/demos", "/demos/{name}"}


@pytest.mark.parametrize(
    ("body", "status"),
    [(b"{not json", 422), (b'{"cap": "x"}', 422), (b"[" * 100, 422), (b" " * 70_000, 413)],
)
def test_the_workers_error_bodies_match_their_declared_schemas(
    worker_app: FastAPI, body: bytes, status: int
) -> None:
    """A run's 422 and 413 are its own shape (param, message), not FastAPI's (loc, msg, type)."""
    declared = worker_app.openapi()["paths"]["/demos/{name}"]["post"]["responses"][str(status)]
    reference = declared["content"]["application/json"]["schema"]["$ref"]
    assert reference.endswith("/InvalidParamsAnswer")
    from app.worker.api import InvalidParamsAnswer

    with TestClient(worker_app) as client:
        response = client.post(
            "/demos/softcap", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == status
    TypeAdapter(InvalidParamsAnswer).validate_python(response.json())

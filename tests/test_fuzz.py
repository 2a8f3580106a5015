"""Every form field, query parameter and path segment of every route, fuzzed: never a 5xx.

Hypothesis sends hostile values to each route of the web app: NUL characters,
digits ``int()`` refuses or misreads (``²``, ``٣``), numbers past 32 and 64
bits and past Python's 4,300-digit limit, long text, markup, and
percent-encoded bytes that are not UTF-8. The routes and their parameters are
read from the app itself, so a new route is fuzzed without a change here. It
runs in both modes (in accounts mode signed in as an admin, so every route is
reached), on SQLite and on PostgreSQL.

Any answer of 500 or more fails, but one: with no demo worker running (as
here), a demo's result is a documented 503 that says the worker is
unavailable. ``QUIZLAB_FUZZ_EXAMPLES`` sets the examples per route (25).
"""

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pydantic import BaseModel

from app.accounts import users as accounts
from app.accounts.limits import LoginLimiter
from app.settings import Settings
from app.web import create_app
from tests.conftest import CSRFClient

PASSWORD = "correct horse battery"
EXAMPLES = int(os.environ.get("QUIZLAB_FUZZ_EXAMPLES", "25"))
CHECKS = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
# A demo computed by no worker: 503, "the demo worker is unavailable" (docs/demos.md).
WORKER_ROUTES = ("/demos/{demo_name}", "/cards/{card_id}/live")


@dataclass(frozen=True)
class Raw:
    """Bytes sent as they are, percent-encoded: what no ``str`` can hold (0xFF, a surrogate)."""

    encoded: str


WORDS = [
    "",
    " ",
    "0",
    "-1",
    "1.5",
    "²",
    "٣",
    "𝟙",
    "3000000000",
    "9" * 25,
    "9" * 5000,
    "1e999",
    "NaN",
    "true",
    "\x00",
    "a\x00b",
    "r²",
    "r9999999999999999999",
    "r3000000000",
    "n../../x",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "{{7*7}}",
    "QZSLOTLIVE0QZ",
    "\u202e\ufeff",
    "x" * 30_000,
    "[" * 5000,
    "test-scaling",
    "test-scaling/why-sqrt",
    "testdeck",
    "practice",
    "bob",
    "ada",
]
RAW = [Raw("%FF"), Raw("%ED%A0%80"), Raw("%00"), Raw("%C0%AF"), Raw("%"), Raw("%zz")]

VALUES = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(RAW),
    st.text(max_size=40),
    st.integers().map(str),
    st.none(),  # the parameter left out
)
UPLOADS = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(
        [
            b"[" * 100_000,
            b'{"format": "quizlab-progress", "version": 1, "reviews": [' + b"9" * 5000 + b"]}",
            b'{"format": "quizlab-progress", "version": 1, "reviews": [{"uid": "\\ud800"}]}',
            b'{"format": "quizlab-progress", "version": 1, "choices": "\xff"}',
        ]
    ),
)


def routes(app: FastAPI) -> Iterator[APIRoute]:
    def walk(found: list[Any]) -> Iterator[APIRoute]:
        for route in found:
            if isinstance(route, APIRoute):
                yield route
            elif hasattr(route, "original_router"):  # an included router
                yield from walk(route.original_router.routes)

    yield from walk(app.router.routes)


@dataclass(frozen=True)
class Parameters:
    query: tuple[str, ...]
    path: tuple[str, ...]
    form: tuple[str, ...]
    files: tuple[str, ...]


def parameters_of(route: APIRoute) -> Parameters:
    """Every parameter a route reads, its dependencies' included, by the name a client sends."""
    query, path, form, files = set(), set(), set(), set()
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        pending += dependant.dependencies
        query |= {p.alias for p in dependant.query_params}
        path |= {p.alias for p in dependant.path_params}
        for param in dependant.body_params:
            kind = param.field_info.annotation
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                form |= set(kind.model_fields)
            elif "UploadFile" in str(kind):
                files.add(param.alias)
            else:
                form.add(param.alias)
    return Parameters(*(tuple(sorted(names)) for names in (query, path, form, files)))


def encoded(value: str | Raw) -> str:
    return value.encoded if isinstance(value, Raw) else quote(value, safe="")


def request_for(
    route: APIRoute, names: Parameters, values: dict[str, Any], upload: bytes
) -> tuple[str, str, dict[str, Any]]:
    """The method, URL and httpx arguments of one fuzzed request."""
    url = route.path_format
    for name in names.path:
        segment = values[name]
        url = url.replace(f"{{{name}}}", encoded(segment) if segment else "x")
    query = [f"{quote(n)}={encoded(values[n])}" for n in names.query if values[n] is not None]
    if query:
        url += "?" + "&".join(query)
    method = sorted(route.methods)[0]
    kwargs: dict[str, Any] = {}
    if names.files:
        kwargs["files"] = {name: ("progress.json", upload) for name in names.files}
    elif method == "POST":
        form = [f"{quote(n)}={encoded(values[n])}" for n in names.form if values[n] is not None]
        kwargs["content"] = "&".join(form).encode()
        kwargs["headers"] = {"Content-Type": "application/x-www-form-urlencoded"}
    return method, url, kwargs


def check_route(client: CSRFClient, route: APIRoute, sign_in: Any) -> None:
    names = parameters_of(route)
    every = (*names.query, *names.path, *names.form)

    @given(values=st.fixed_dictionaries({n: VALUES for n in every}), upload=UPLOADS)
    @CHECKS
    def check(values: dict[str, Any], upload: bytes) -> None:
        sign_in(client)
        method, url, kwargs = request_for(route, names, values, upload)
        for htmx in (False, True):
            headers = {**kwargs.get("headers", {}), **({"HX-Request": "true"} if htmx else {})}
            response = client.request(method, url, **{**kwargs, "headers": headers})
            status = response.status_code
            allowed = route.path in WORKER_ROUTES and status == 503 and "worker" in response.text
            assert status < 500 or allowed, f"{method} {url} answered {status}: {response.text}"

    check()


def fuzz(app: FastAPI, client: CSRFClient, sign_in: Any) -> set[str]:
    """Fuzz every route; the sign-out routes last, since they end the session."""
    found = sorted(routes(app), key=lambda r: (r.path.startswith("/logout"), r.path))
    for route in found:
        check_route(client, route, sign_in)
    return {route.path for route in found}


def test_no_input_to_any_route_gets_a_5xx(db_settings: Settings) -> None:
    app = create_app(db_settings)
    with CSRFClient(app) as client:
        fuzzed = fuzz(app, client, lambda _client: None)
    assert {"/review/grade", "/stats/import", "/cards/{card_id}/choice"} <= fuzzed


def test_no_input_to_any_route_gets_a_5xx_in_accounts_mode(db_settings: Settings) -> None:
    app = create_app(db_settings.model_copy(update={"auth": "accounts"}))
    # Fuzzing /login fails thousands of sign-ins: no limit, or the admin is locked out.
    app.state.login_limiter = LoginLimiter(account_limit=10**6, address_limit=10**6)
    with CSRFClient(app) as client:
        with app.state.db.session() as session:
            for name in ("ada", "bob"):
                accounts.create_user(
                    session, name=name, password=PASSWORD, is_admin=True, now=accounts.now_utc()
                )

        def sign_in(browser: CSRFClient) -> None:
            if browser.get("/account", follow_redirects=False).status_code != 200:
                browser.post("/login", data={"name": "ada", "password": PASSWORD})

        fuzzed = fuzz(app, client, sign_in)
    assert {"/login", "/admin/users/{name}/disabled", "/logout/everywhere"} <= fuzzed


@pytest.mark.parametrize("value", [*RAW, Raw("%F0%9F%98")])
def test_bytes_that_are_not_utf8_in_a_form_field_get_a_4xx_or_are_read(
    db_client: CSRFClient, value: Raw
) -> None:
    """Starlette reads form bytes as UTF-8 with replacement: never a crash."""
    body = f"item={value.encoded}&version={value.encoded}&answer={value.encoded}".encode()
    response = db_client.post(
        "/review/grade",
        content=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code < 500

"""GET /healthz: what container healthchecks ask the web server."""

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError

from app.web.routes import health


def test_healthy_server_answers_ok_with_cards_and_database(client: TestClient) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "version": "0.1.0",
        "cards": 2,
        "database": "sqlite",
    }


def test_database_that_does_not_answer_gives_503_without_details(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(_database: object) -> None:
        raise OperationalError("SELECT 1", {}, Exception("connection to db.internal refused"))

    monkeypatch.setattr(health, "ping", down)

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["detail"] == "the database did not answer"
    assert "db.internal" not in response.text

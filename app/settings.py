"""Every setting Quizlab reads, in one place.

Each field is read from an environment variable with the ``QUIZLAB_`` prefix
(``content_dir`` from ``QUIZLAB_CONTENT_DIR``, and so on). The defaults are the
embedded ones: bundled content, a SQLite file under ``./data`` and a local
worker started by ``quizlab serve``.
"""

import os
import secrets
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="QUIZLAB_", extra="ignore")

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
    worker_device: str = Field(
        default="auto",
        pattern="^(auto|cpu|cuda)$",
        description="Where the worker runs demos: auto (CUDA when present), cpu or cuda.",
    )
    worker_max_concurrent: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Demos the worker computes at once (1 leaves a core to the web server).",
    )
    worker_max_waiting: int = Field(
        default=16,
        ge=0,
        le=10_000,
        description="Demo requests that may queue at the worker before it answers 503.",
    )
    worker_threads: int = Field(
        default=1,
        ge=1,
        le=256,
        description="torch threads per demo on the worker.",
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
        description="Seconds between checks for edited card files when reloading is on.",
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

    def session_secret(self) -> bytes:
        """The cookie-signing key: the setting, or one made once and kept in ``data_dir``."""
        if self.secret_key:
            return self.secret_key.encode()
        path = self.data_dir / "secret_key"
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            # Written whole under another name, then linked into place: of two
            # processes starting together, both end up reading the one complete key.
            # The draft's name must be unique across machines, not only processes:
            # two containers sharing one volume both run as PID 1.
            descriptor, draft_name = tempfile.mkstemp(prefix=".secret_key.", dir=self.data_dir)
            draft = Path(draft_name)
            with os.fdopen(descriptor, "w", encoding="ascii") as file:
                file.write(secrets.token_urlsafe(48))
            try:
                os.link(draft, path)
            except FileExistsError:
                pass
            finally:
                draft.unlink()
        return path.read_text(encoding="ascii").strip().encode()

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'quizlab.sqlite3').resolve()}"


@lru_cache
def get_settings() -> Settings:
    return Settings()

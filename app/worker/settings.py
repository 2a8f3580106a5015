"""The worker's settings: the ``QUIZLAB_WORKER_*`` variables, and nothing of the web's.

A worker on a GPU host is configured on its own; it never needs the web
server's database, content or secret, so it does not read them.
"""

from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class WorkerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="QUIZLAB_WORKER_", extra="ignore", frozen=True)

    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto",
        description="Where the worker runs demos: auto (CUDA when present), cpu or cuda.",
    )
    max_concurrent: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Demos the worker computes at once (1 leaves a core to the web server).",
    )
    max_waiting: int = Field(
        default=16,
        ge=0,
        le=10_000,
        description="Demo requests that may queue at the worker before it answers 503.",
    )
    threads: int = Field(
        default=1,
        ge=1,
        le=256,
        description="torch threads per demo on the worker.",
    )
    parent_pid: int | None = Field(
        default=None,
        ge=1,
        description="Stop when this process ends; `quizlab serve` sets it for its local worker.",
    )


@lru_cache
def get_worker_settings() -> WorkerSettings:
    return WorkerSettings()

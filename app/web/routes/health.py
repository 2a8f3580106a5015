"""``GET /healthz``: whether this web process can serve pages, for container healthchecks.

It answers 200 once start-up has loaded the cards and migrated the database,
and 503 while the database does not answer, the data folder's disk is full
or the database refuses a write (a probe, rolled back). It does not ask the demo worker:
without one the site still works and live numbers read "unavailable".

The image's ``HEALTHCHECK`` and compose.yaml call it with Python's urllib,
so the image needs no curl.
"""

import asyncio
import logging
import shutil
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app import __version__
from app.content.library import Library
from app.settings import Settings
from app.storage.database import Database

logger = logging.getLogger(__name__)

router = APIRouter()


MIN_FREE_BYTES = 16_000_000  # an upload spools this much; less is full for our purposes


def ping(database: Database) -> None:
    """One round trip to the database; raises SQLAlchemyError when it does not answer."""
    with database.engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def storage_problem(database: Database, folder: Path) -> str | None:
    """Why storage cannot take a write, or None: the disk's free space, then a write probe."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None  # a folder not made yet: the database's probe still tells
    if free is not None and free < MIN_FREE_BYTES:
        return f"storage is full: less than {MIN_FREE_BYTES // 1_000_000} MB free"
    try:
        database.probe_write()
    except SQLAlchemyError as exc:
        logger.warning("health check: the database cannot be written: %s", exc)
        return "the database cannot be written"
    return None


class Health(BaseModel):
    """What ``/healthz`` answers; in the OpenAPI schema so schemathesis checks it."""

    status: Literal["ok", "unavailable"]
    version: str
    cards: int
    database: str
    detail: str | None = None


@router.get(
    "/healthz",
    name="health",
    response_model=Health,
    responses={
        503: {"model": Health, "description": "The database did not answer or cannot be written."}
    },
)
async def health(request: Request) -> JSONResponse:
    database: Database = request.app.state.db
    library: Library = request.app.state.library
    found = {
        "version": __version__,
        "cards": len(library.snapshot.cards),
        "database": database.dialect,
    }
    try:
        await asyncio.to_thread(ping, database)
    except SQLAlchemyError as exc:
        # The message can name hosts; the log keeps it, the public answer does not.
        logger.warning("health check: the database did not answer: %s", exc)
        problem: str | None = "the database did not answer"
    else:
        settings: Settings = request.app.state.settings
        problem = await asyncio.to_thread(storage_problem, database, settings.data_dir)
    if problem is not None:
        return JSONResponse({"status": "unavailable", **found, "detail": problem}, status_code=503)
    return JSONResponse({"status": "ok", **found})

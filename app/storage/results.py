"""Demo results in the database: the durable layer under :class:`app.live.results.LiveResults`.

Called from a worker thread (``asyncio.to_thread``): these are blocking calls.
"""

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from app.storage.database import Database
from app.storage.models import DemoResult


@dataclass(frozen=True)
class StoredResult:
    """A stored demo result and when it was measured (an export shows the date)."""

    result: dict[str, Any]
    measured_at: datetime


class DatabaseResultStore:
    """Demo results by cache key in the ``demo_result`` table."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def get(self, key: str) -> dict[str, Any] | None:
        with self.database.session() as session:
            row = session.get(DemoResult, key)
            if row is None:
                return None
            result: dict[str, Any] = json.loads(row.result)
            return result

    def put(self, key: str, demo: str, version: int, result: dict[str, Any]) -> None:
        row = DemoResult(
            key=key,
            demo=demo,
            version=version,
            result=json.dumps(result),
            created_at=datetime.now(UTC),
        )
        with self.database.session() as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:
                # Another replica stored the same key first: same parameters,
                # same numbers, so there is nothing to do.
                session.rollback()

    def many(self, keys: Collection[str]) -> dict[str, StoredResult]:
        """The stored results among ``keys``, with their dates; one query."""
        if not keys:
            return {}
        with self.database.session() as session:
            rows = session.scalars(select(DemoResult).where(col(DemoResult.key).in_(keys))).all()
            return {row.key: StoredResult(json.loads(row.result), row.created_at) for row in rows}

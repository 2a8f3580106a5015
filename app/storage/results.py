"""Demo results in the database: the durable layer under :class:`app.live.results.LiveResults`.

Called from a worker thread (``asyncio.to_thread``): these are blocking calls.
"""

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.storage.database import Database
from app.storage.models import DemoResult


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

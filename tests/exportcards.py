"""Content for the export tests: the two test cards and one with a live number and a demo."""

import json
from datetime import UTC, datetime
from pathlib import Path

from app.live.results import LiveResults
from app.storage.database import Database
from app.storage.models import DemoResult
from tests.cardtext import GOOD_CARD, OTHER_CARD

LIVE_CARD = """\
---
id: test-live
title: A measured number
question: How large is the standard deviation of an unscaled score at $d_k = 128$?
deck: numbers
tags: [variance, live numbers]
difficulty: easy
minutes: 2
---

## Answer

About {live}`score_variance.std(d_k=128, divisor=none) = 11.31 ± 3%`, the square root of 128.

```demo score_variance
d_k: 128
divisor: none
```

## TL;DR

$\\sqrt{128} \\approx 11.3$; see [the scaling card](card:test-scaling).

## Key points

- The standard deviation is the square root of the variance
- Unscaled, the variance of q·k is $d_k$
- Dividing by $\\sqrt{d_k}$ brings it to 1

## Follow-ups

### And after dividing by $\\sqrt{d_k}$? {#scaled}

It is {live}`score_variance.std(d_k=128, divisor=sqrt_dk) = 1 ± 3%`:

```python
scores = q @ k.T / math.sqrt(d_k)
```

## Red flags

### Saying it is 128 {#variance-not-std}

That is the variance; the standard deviation is its square root.
"""

STD_UNSCALED = {"demo": "score_variance", "params": {"d_k": 128, "divisor": "none"}}
MEASURED_AT = datetime(2026, 5, 4, 12, 30, tzinfo=UTC)


def write_content(root: Path) -> Path:
    """Three cards in two decks (testdeck, numbers) under ``root``; returns the folder."""
    for deck, name, text in [
        ("testdeck", "scaling.md", GOOD_CARD),
        ("testdeck", "other.md", OTHER_CARD),
        ("numbers", "live.md", LIVE_CARD),
    ]:
        (root / deck).mkdir(parents=True, exist_ok=True)
        (root / deck / name).write_text(text)
    return root


def store_measurement(database: Database, outputs: dict[str, float]) -> None:
    """Store a run of score_variance(d_k=128, divisor=none), as the site does after its first run."""
    spec, params, key = LiveResults.resolve("score_variance", STD_UNSCALED["params"])
    result = {"version": spec.version, "params": params, "outputs": outputs, "theory": {}}
    with database.session() as session:
        session.add(
            DemoResult(
                key=key,
                demo=spec.name,
                version=spec.version,
                result=json.dumps(result),
                created_at=MEASURED_AT,
            )
        )
        session.commit()

"""Write app/demo_catalog.json from the worker's demo registry.

The web server never imports torch, yet it must know which demos exist to
check cards and build demo forms: it reads this file. Run this after adding or
changing a demo; tests/test_demo_catalog.py fails while the file is stale.

    .venv/bin/python scripts/demo_catalog.py
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def catalog() -> list[dict[str, object]]:
    from app.worker.demos import DEMOS

    return [demo.info().model_dump(mode="json") for demo in DEMOS.values()]


def main() -> None:
    target = ROOT / "app" / "demo_catalog.json"
    target.write_text(json.dumps(catalog(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {target.relative_to(ROOT)}: {len(catalog())} demos")


if __name__ == "__main__":
    main()

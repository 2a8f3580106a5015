"""Static assets that are generated must match their generator."""

import importlib.util
from pathlib import Path

from app.settings import PROJECT_ROOT


def load_script(name: str):  # type: ignore[no-untyped-def]
    path: Path = PROJECT_ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pygments_rules_in_app_css_are_what_pygments_generates() -> None:
    script = load_script("pygments_css")
    css = (PROJECT_ROOT / "static" / "app.css").read_text()
    assert script.current(css) == script.block(), "run scripts/pygments_css.py"

"""The parts of app/ import only what docs/architecture.md says they may.

Each part is a package of app/ (``app.content``, ``app.web``, ...). An import
anywhere in a module counts, inside functions too: a lazy import is still a
dependency. ``if TYPE_CHECKING:`` blocks are skipped (they never run).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT

APP = PROJECT_ROOT / "app"

# What each part may import, besides itself. ``app`` is the top package
# (``__version__``); ``settings`` is the web's one Settings class; ``safejson``
# parses JSON from strangers within limits, for the web and the worker alike.
ALLOWED: dict[str, set[str]] = {
    "demos": set(),
    "storage": set(),
    "content": {"demos"},
    "accounts": {"storage"},
    "practice": {"content", "storage", "safejson"},
    "live": {"content", "demos"},
    "worker": {"demos", "safejson"},
    "export": {"content", "demos", "live", "storage"},
    "settings": set(),
    "safejson": set(),
    "web": {
        "app",
        "accounts",
        "content",
        "demos",
        "export",
        "live",
        "practice",
        "settings",
        "storage",
        "safejson",
    },
    "cli": {
        "app",
        "accounts",
        "content",
        "demos",
        "export",
        "live",
        "practice",
        "settings",
        "storage",
        "safejson",
        "web",
    },
    "__main__": {"cli"},
    "__init__": set(),
}
# Libraries that only the worker may import: they are its extra, absent from
# the web image, and torch alone costs seconds and hundreds of MB to import.
WORKER_ONLY = {"torch", "numpy", "sklearn", "scipy", "threadpoolctl", "faiss", "bm25s"}


def part_of(module: str) -> str:
    """``app.web.routes.cards`` → ``web``; ``app`` → ``app``; ``app.settings`` → ``settings``."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "app"


def module_name(path: Path, project: Path) -> str:
    relative = path.relative_to(project).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts = parts[:-1]
    return ".".join(parts)


def imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every ``(line, module)`` a module imports, outside ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            if node.module == "app":  # from app import web → app.web (not __version__)
                for alias in node.names:
                    if not alias.name.startswith("__"):
                        yield node.lineno, f"app.{alias.name}"


def violations(project: Path = PROJECT_ROOT) -> list[str]:
    """Every import in ``project/app`` that breaks the table above, as ``path:line: message``."""
    found = []
    for path in sorted((project / "app").rglob("*.py")):
        source = part_of(module_name(path, project))
        allowed = ALLOWED.get(source)
        where = path.relative_to(project)
        if allowed is None:
            found.append(f"{where}: part '{source}' is not in tests/test_architecture.py")
            continue
        for line, module in imports(ast.parse(path.read_text(), str(path))):
            top = module.split(".")[0]
            if top in WORKER_ONLY and source != "worker":
                found.append(f"{where}:{line}: {module} is worker-only; '{source}' imports it")
            if top != "app" or module == "app":
                continue
            target = part_of(module)
            if target != source and target not in allowed:
                found.append(f"{where}:{line}: '{source}' may not import '{target}' ({module})")
    return found


def test_every_part_imports_only_what_it_may() -> None:
    assert violations() == []


def test_the_allowed_graph_has_no_cycles() -> None:
    done: set[str] = set()

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"cycle: {' → '.join((*path, part))}"
        if part in done:
            return
        for target in ALLOWED.get(part, ()):
            visit(target, (*path, part))
        done.add(part)

    for part in ALLOWED:
        visit(part, ())


@pytest.mark.parametrize(
    ("part", "line", "message"),
    [
        ("content", "from app.web.templating import templates", "'content' may not import 'web'"),
        ("storage", "from app.practice import activity", "'storage' may not import 'practice'"),
        ("worker", "from app.settings import Settings", "'worker' may not import 'settings'"),
        ("practice", "import torch", "torch is worker-only"),
        ("demos", "from app.content.card import Card", "'demos' may not import 'content'"),
    ],
)
def test_a_forbidden_import_is_reported_with_its_line(
    tmp_path: Path, part: str, line: str, message: str
) -> None:
    # The checker itself must be able to fail: plant one bad import in a copy.
    root = tmp_path / "app" / part
    root.mkdir(parents=True)
    (root / "bad.py").write_text(
        f'"""A module that breaks the rules."""\n\n\ndef f() -> None:\n    {line}\n'
    )
    [found] = violations(tmp_path)
    assert found.startswith(f"app/{part}/bad.py:5: ")
    assert message in found


# Migrations are history: an applied revision is never rewritten to shorten it.
SIZE_EXEMPT = APP / "storage" / "migrations" / "versions"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def sized_modules() -> list[Path]:
    return [path for path in sorted(APP.rglob("*.py")) if SIZE_EXEMPT not in path.parents]


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PROJECT_ROOT)): lines
        for path in sized_modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_80_lines() -> None:
    long = []
    for path in sized_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno} {node.name}")
    assert long == []


def test_no_function_is_more_complex_than_radon_c() -> None:
    from radon.complexity import cc_rank, cc_visit

    complex_ = [
        f"{path.relative_to(PROJECT_ROOT)}:{block.lineno} {block.name} {cc_rank(block.complexity)}"
        for path in sized_modules()
        for block in cc_visit(path.read_text())
        if cc_rank(block.complexity) not in "ABC"
    ]
    assert complex_ == []

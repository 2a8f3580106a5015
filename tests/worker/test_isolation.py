"""The web server never imports torch or numpy: only app/worker may, and only it is imported lazily.

torch and numpy are the ``worker`` extra; a web-only install lacks them, and
importing torch would add seconds and hundreds of MB to the web process.
"""

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT

APP = PROJECT_ROOT / "app"
WORKER = APP / "worker"
HEAVY = {"torch", "numpy"}


def web_modules() -> list[Path]:
    return sorted(path for path in APP.rglob("*.py") if WORKER not in path.parents)


class ImportsAtImportTime(ast.NodeVisitor):
    """Collect ``(line, module)`` for imports that run when the module is imported.

    Function bodies run later (a CLI command may import the worker when it is
    invoked) and ``if TYPE_CHECKING:`` blocks never run, so both are skipped.
    """

    def __init__(self) -> None:
        self.eager: list[tuple[int, str]] = []
        self.lazy: list[tuple[int, str]] = []
        self._depth = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._nested(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._nested(node)

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._record(node.lineno, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            self._record(node.lineno, node.module)

    def visit_Call(self, node: ast.Call) -> None:
        # importlib.import_module("torch") / __import__("torch")
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._record(node.lineno, first.value)
        self.generic_visit(node)

    def _nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    def _record(self, line: int, module: str) -> None:
        (self.lazy if self._depth else self.eager).append((line, module))


def imports(path: Path) -> ImportsAtImportTime:
    visitor = ImportsAtImportTime()
    visitor.visit(ast.parse(path.read_text(), filename=str(path)))
    return visitor


def heavy_imports() -> Iterator[str]:
    """torch or numpy imported anywhere outside app/worker, even inside a function."""
    for path in web_modules():
        found = imports(path)
        for line, module in found.eager + found.lazy:
            if module.split(".")[0] in HEAVY:
                yield f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module}"


def eager_worker_imports() -> Iterator[str]:
    """app.worker imported when a web module is imported (it pulls torch in)."""
    for path in web_modules():
        for line, module in imports(path).eager:
            if module == "app.worker" or module.startswith("app.worker."):
                yield (
                    f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module} at import time; "
                    "import it inside the function that starts the worker"
                )


def test_web_modules_exist() -> None:
    assert web_modules(), "the scan found no module: check APP"


def test_no_module_outside_the_worker_imports_torch_or_numpy() -> None:
    assert list(heavy_imports()) == []


def test_the_worker_is_imported_only_inside_functions_outside_it() -> None:
    assert list(eager_worker_imports()) == []


def test_the_scan_sees_through_functions_but_not_type_checking() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import numpy as np\n"
        "if TYPE_CHECKING:\n    import torch\n"
        "def serve():\n    from app.worker.api import create_worker_app\n"
        "    importlib.import_module('torch.nn')\n"
    )
    visitor = ImportsAtImportTime()
    visitor.visit(ast.parse(source))
    assert visitor.eager == [(1, "typing"), (2, "numpy")]
    assert visitor.lazy == [(6, "app.worker.api"), (7, "torch.nn")]


@pytest.mark.parametrize("module", ["app.worker", "app.web", "app.cli.commands"])
def test_importing_leaves_torch_unloaded(module: str) -> None:
    code = (
        "import importlib.util, sys\n"
        f"if importlib.util.find_spec({module!r}) is None: sys.exit(3)\n"
        f"import {module}\n"
        "sys.exit(1 if 'torch' in sys.modules or 'numpy' in sys.modules else 0)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, check=False)
    if completed.returncode == 3:
        pytest.skip(f"{module} does not exist yet")
    assert completed.returncode == 0, f"importing {module} loaded torch or numpy"

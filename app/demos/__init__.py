"""Demos: what each live demo takes and returns, without torch.

Both processes import this part: the worker validates requests with these
specs before computing, and the web server builds demo forms and checks cards'
``{live}`` bindings against them, so a parameter is declared once.

May import: pydantic and itself. Never the web, the CLI, storage, content or
torch (tests/test_architecture.py).
"""

from app.demos.catalog import CATALOG, UnknownDemo, demo_spec
from app.demos.params import DemoParams, InvalidParams, ParamProblem, ParamSpec, Scalar, Seed
from app.demos.spec import DemoInfo, DemoSpec

__all__ = [
    "CATALOG",
    "DemoInfo",
    "DemoParams",
    "DemoSpec",
    "InvalidParams",
    "ParamProblem",
    "ParamSpec",
    "Scalar",
    "Seed",
    "UnknownDemo",
    "demo_spec",
]

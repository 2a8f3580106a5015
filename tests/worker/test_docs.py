"""docs/demos.md describes every demo: its parameter table is the code's, and every output is listed.

A demo, parameter or bound added or changed without updating the docs fails
here with the table the docs should hold.
"""

import re
from typing import Any

import pytest

from app.demos.params import Scalar, param_specs
from app.settings import PROJECT_ROOT
from app.worker.demo import Demo
from app.worker.demos import DEMOS

DOCS = PROJECT_ROOT / "docs" / "demos.md"


def show(value: Scalar) -> str:
    """A value as the docs write it: 200,000, 1e-06, true, sqrt_dk."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return value


def param_table(demo: Demo[Any]) -> str:
    """The Markdown table of a demo's parameters, as docs/demos.md must contain it."""
    lines = ["| parameter | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for spec in param_specs(demo.params):
        if spec.choices is not None:
            allowed = ", ".join(f"`{show(choice)}`" for choice in spec.choices)
        elif spec.type == "boolean":
            allowed = "`true`, `false`"
        else:
            allowed = f"{show(spec.minimum or 0)} – {show(spec.maximum or 0)}"
        lines.append(
            f"| `{spec.name}` | {spec.type} | `{show(spec.default)}` | {allowed} "
            f"| {spec.description} |"
        )
    return "\n".join(lines)


def sections() -> dict[str, str]:
    """Each ``### `name` `` section of the docs, by demo name."""
    text = DOCS.read_text()
    parts = re.split(r"^### `([a-z0-9_]+)`.*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_demo_has_a_section_in_registry_order() -> None:
    assert list(sections()) == list(DEMOS)


@pytest.mark.parametrize("name", list(DEMOS))
def test_parameter_table_matches_the_code(name: str) -> None:
    expected = param_table(DEMOS[name])
    assert expected in sections()[name], f"docs/demos.md, {name}: the table should be\n{expected}"


@pytest.mark.parametrize("name", list(DEMOS))
def test_every_output_is_described(name: str) -> None:
    section = sections()[name]
    missing = [output for output in DEMOS[name].outputs if f"| `{output}` |" not in section]
    assert missing == [], f"docs/demos.md, {name}: add rows for {missing}"


@pytest.mark.parametrize("name", list(DEMOS))
def test_every_demo_states_its_budget(name: str) -> None:
    assert "**Budget**" in sections()[name]

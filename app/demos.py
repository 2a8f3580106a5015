"""The demos the worker offers, as the web server knows them: without torch.

``app/demo_catalog.json`` is written from the worker's registry by
``scripts/demo_catalog.py`` (a test fails while it is stale). From it come the
content check's messages for a live number or demo block that names an unknown
demo, output or parameter, or a value out of bounds, and the form controls of
an embedded demo.
"""

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.binding import EmbeddedDemo, LiveBinding, Scalar, parse_value

CATALOG_PATH = Path(__file__).with_name("demo_catalog.json")


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class ParamSpec:
    name: str
    type: str  # integer | number | boolean | string
    default: Scalar
    minimum: float | None
    maximum: float | None
    choices: tuple[Scalar, ...] | None
    label: str
    description: str

    def requirement(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.type == "boolean":
            return "true or false"
        kind = "an integer" if self.type == "integer" else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} between {_number(self.minimum)} and {_number(self.maximum)}"
        return kind

    def coerce(self, value: Scalar) -> Scalar:
        """The value as this parameter's type (form posts are strings).

        Raises:
            ValueError: with a message that names the parameter and its bounds.
        """
        wrong = ValueError(f"{self.name} must be {self.requirement()}, got {value!r}")
        if isinstance(value, str):
            value = parse_value(value.strip())
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise wrong
        elif self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise wrong
        elif self.type == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise wrong
            value = float(value)
        else:
            value = str(value)
        if self.choices is not None and value not in self.choices:
            raise wrong
        if isinstance(value, int | float) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise wrong
            if self.maximum is not None and value > self.maximum:
                raise wrong
        return value


@dataclass(frozen=True)
class DemoSpec:
    name: str
    version: int
    title: str
    description: str
    seeded: bool
    params: tuple[ParamSpec, ...]
    outputs: dict[str, str]

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, given: dict[str, Scalar]) -> dict[str, Scalar]:
        """Every parameter, defaults filled in and values coerced.

        Raises:
            ValueError: an unknown parameter or a bad value, said so that an
                author or learner knows what to change.
        """
        unknown = [name for name in given if self.param(name) is None]
        if unknown:
            known = ", ".join(p.name for p in self.params)
            raise ValueError(f"demo '{self.name}' has no parameter '{unknown[0]}' (it has {known})")
        return {
            p.name: p.coerce(given[p.name]) if p.name in given else p.default for p in self.params
        }

    def cache_key(self, params: dict[str, Scalar]) -> str:
        """Demo, version and every parameter (seed included): equal keys, equal results."""
        canonical = json.dumps([self.name, self.version, params], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def _spec(raw: dict[str, Any]) -> DemoSpec:
    params = tuple(
        ParamSpec(
            name=p["name"],
            type=p["type"],
            default=p["default"],
            minimum=p["minimum"],
            maximum=p["maximum"],
            choices=tuple(p["choices"]) if p["choices"] is not None else None,
            label=p["label"],
            description=p["description"],
        )
        for p in raw["params"]
    )
    return DemoSpec(
        name=raw["name"],
        version=raw["version"],
        title=raw["title"],
        description=raw["description"],
        seeded=raw["seeded"],
        params=params,
        outputs=dict(raw["outputs"]),
    )


@lru_cache(maxsize=1)
def catalog() -> dict[str, DemoSpec]:
    """Every demo by name, from the catalog file."""
    return {raw["name"]: _spec(raw) for raw in json.loads(CATALOG_PATH.read_text())}


class UnknownDemo(ValueError):
    """No demo in the catalog has this name; the message lists the ones that do."""


def demo_spec(name: str) -> DemoSpec:
    """The demo called ``name``.

    Raises:
        UnknownDemo: no such demo.
    """
    found = catalog().get(name)
    if found is None:
        raise UnknownDemo(f"unknown demo '{name}' (demos: {', '.join(catalog())})")
    return found


def binding_problem(binding: LiveBinding) -> str | None:
    """What is wrong with a live number's demo, output or parameters, if anything."""
    try:
        demo = demo_spec(binding.demo)
        if binding.output not in demo.outputs:
            outputs = ", ".join(demo.outputs)
            return (
                f"live number: demo '{demo.name}' has no output '{binding.output}' "
                f"(outputs: {outputs})"
            )
        demo.resolve(binding.params)
    except ValueError as exc:
        return f"live number: {exc}"
    return None


def embedded_problem(embedded: EmbeddedDemo) -> str | None:
    """What is wrong with a demo block's name or parameters, if anything."""
    try:
        demo_spec(embedded.demo).resolve(embedded.params)
    except ValueError as exc:
        return f"demo block: {exc}"
    return None

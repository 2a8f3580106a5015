"""One demo as both processes know it: name, parameters, outputs, budget.

A :class:`DemoSpec` is the single declaration of a demo's interface. The
worker validates requests with it before computing (``app/worker/demo.py``
pairs it with the compute function); the web server builds the demo's form
from it, checks a card's ``{live}`` bindings against it and keys cached results
by it. Both sides therefore give the same message for the same bad value.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from app.demos.params import (
    DemoParams,
    InvalidParams,
    ParamSpec,
    Scalar,
    param_specs,
    problems_from_error,
)

P = TypeVar("P", bound=DemoParams)


class DemoInfo(BaseModel):
    """A demo as ``GET /demos`` lists it: enough for a client to build its form."""

    name: str
    version: int
    title: str
    description: str
    seeded: bool
    params: list[ParamSpec]
    outputs: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class DemoSpec(Generic[P]):
    """A demo's interface.

    Attributes:
        name: snake_case, used in URLs and in ``{live}`` bindings.
        version: bump it when the same parameters start giving other numbers.
        title: a short human title.
        description: one or two sentences on what the demo shows.
        params: the parameters model (typed, bounded, strict).
        outputs: every output name the demo may report, with its meaning.
        uses_device: False for demos that are plain arithmetic (a table
            look-up): they run on the CPU whatever the worker's device.
        worst_cases: the parameters that cost the most time and memory, for
            the budget benchmark (``scripts/bench_worker.py --budget``).
    """

    name: str
    version: int
    title: str
    description: str
    params: type[P]
    outputs: Mapping[str, str]
    uses_device: bool = True
    worst_cases: tuple[Mapping[str, Any], ...] = field(default=())

    @cached_property
    def fields(self) -> tuple[ParamSpec, ...]:
        """Every parameter as a form control sees it, in declaration order."""
        return tuple(param_specs(self.params))

    @property
    def seeded(self) -> bool:
        return "seed" in self.params.model_fields

    def param(self, name: str) -> ParamSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)

    def validate(self, raw: object) -> P:
        """Validate request parameters; missing ones take their defaults.

        Raises:
            InvalidParams: one problem per bad parameter, each naming the
                parameter and what it accepts.
        """
        try:
            return self.params.model_validate(raw)
        except ValidationError as error:
            raise InvalidParams(problems_from_error(self.name, self.params, error)) from None

    def resolve(self, given: Mapping[str, Scalar]) -> dict[str, Scalar]:
        """Every parameter, defaults filled in, from a card binding or a form.

        Form values arrive as strings: each is read as the JSON scalar it
        spells (``"128"`` → 128, ``"true"`` → True) before strict validation.

        Raises:
            InvalidParams: as :meth:`validate`; ``str(error)`` names every
                bad parameter and what it accepts.
        """
        typed = {name: _typed(self.param(name), value) for name, value in given.items()}
        result: dict[str, Scalar] = self.validate(typed).model_dump(mode="json")
        return result

    def cache_key(self, params: Mapping[str, Scalar]) -> str:
        """Demo, version and every parameter (seed included): equal keys, equal results."""
        canonical = json.dumps([self.name, self.version, dict(params)], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def info(self) -> DemoInfo:
        """This demo's description for ``GET /demos``."""
        return DemoInfo(
            name=self.name,
            version=self.version,
            title=self.title,
            description=self.description,
            seeded=self.seeded,
            params=list(self.fields),
            outputs=dict(self.outputs),
        )

    def smallest(self) -> P:
        """The cheapest parameters: every bounded number at its minimum.

        Used to warm the worker up at start-up (the first call of each torch
        kernel pays a one-time set-up cost) and to test the edge of each range.
        """
        return self.validate(
            {
                spec.name: spec.minimum
                for spec in self.fields
                if spec.minimum is not None and spec.choices is None and spec.name != "seed"
            }
        )


def _typed(spec: ParamSpec | None, value: Scalar) -> Scalar:
    """A form string as the scalar it spells, for parameters that are not strings.

    Unknown names and string parameters pass through unchanged, so the
    model's own message (unknown parameter, not a choice) is the one shown.
    """
    if spec is None or spec.type == "string" or not isinstance(value, str):
        return value
    text = value.strip()
    if spec.type == "boolean":
        return {"true": True, "false": False}.get(text.lower(), value)
    try:
        number = json.loads(text)
    except ValueError:
        return value
    if isinstance(number, int | float) and not isinstance(number, bool):
        if spec.type == "number":
            return float(number)
        return number
    return value

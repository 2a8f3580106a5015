"""One demo: its name, parameters and compute function, and the result it returns.

A demo module declares a :class:`DemoParams` subclass, a compute function
``(params, device) -> Outcome`` and a :class:`Demo` that ties them together.
:meth:`Demo.run` times the computation and wraps the :class:`Outcome` into a
:class:`DemoResult`, the JSON the worker sends back.
"""

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import torch
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from app.worker.device import synchronize
from app.worker.params import (
    DemoParams,
    InvalidParams,
    ParamSpec,
    Scalar,
    param_specs,
    problems_from_error,
)

P = TypeVar("P", bound=DemoParams)


class Series(BaseModel):
    """Data for one chart trace.

    A histogram's ``x`` holds the centres of equal-width bins and ``y`` the
    counts; a bar chart's ``x`` may hold labels (model names) instead of numbers.
    """

    # JSON has no NaN or Infinity: a non-finite number here is a bug in the
    # demo, caught before it becomes an unparseable response.
    model_config = ConfigDict(allow_inf_nan=False)

    name: str
    kind: Literal["histogram", "line", "bar"]
    x: list[float] | list[str]
    y: list[float]
    x_label: str
    y_label: str

    @model_validator(mode="after")
    def _same_length(self) -> "Series":
        if len(self.x) != len(self.y):
            raise ValueError(f"series {self.name!r}: {len(self.x)} x values but {len(self.y)} y")
        return self


class DemoResult(BaseModel):
    """What ``POST /demos/{name}`` returns.

    Attributes:
        demo: the demo's name.
        version: bumped whenever the same parameters give different numbers,
            so a cached result can be told apart from a fresh one.
        params: every parameter as validated, defaults and seed included, so
            the result can be reproduced from it alone.
        device: ``"cpu"`` or ``"cuda"``: where the numbers were computed.
        outputs: the measured numbers, by name.
        theory: what theory predicts for some outputs (same keys); an output
            with no honest closed form has no entry.
        series: chart data.
        notes: caveats and sources that belong next to the numbers.
        elapsed_ms: wall-clock time of the computation alone.
    """

    model_config = ConfigDict(allow_inf_nan=False)

    demo: str
    version: int
    params: dict[str, Scalar]
    device: str
    outputs: dict[str, float]
    theory: dict[str, float]
    series: list[Series]
    notes: list[str]
    elapsed_ms: float

    @model_validator(mode="after")
    def _theory_matches_outputs(self) -> "DemoResult":
        extra = set(self.theory) - set(self.outputs)
        if extra:
            raise ValueError(f"theory for outputs the demo does not measure: {sorted(extra)}")
        return self


@dataclass(frozen=True)
class Outcome:
    """What a compute function returns; :meth:`Demo.run` adds the rest."""

    outputs: dict[str, float]
    theory: dict[str, float] = field(default_factory=dict)
    series: list[Series] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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
class Demo(Generic[P]):
    """One demo.

    Attributes:
        name: snake_case, used in URLs.
        version: bump it when the same parameters start giving other numbers.
        title: a short human title.
        description: one or two sentences on what the demo shows.
        params: the parameters model.
        outputs: every output name the demo may report, with its meaning.
        compute: ``(params, device) -> Outcome``. Runs under
            ``torch.inference_mode``; must be deterministic for a given seed.
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
    compute: Callable[[P, torch.device], Outcome]
    uses_device: bool = True
    worst_cases: tuple[Mapping[str, Any], ...] = ()

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

    def run(self, params: P, device: torch.device) -> DemoResult:
        """Compute the demo on ``device`` and time it.

        Raises:
            RuntimeError: the compute function reported an output the demo
                does not declare (a bug in the demo, not in the request).
        """
        where = device if self.uses_device else torch.device("cpu")
        start = time.perf_counter()
        with torch.inference_mode():
            outcome = self.compute(params, where)
        synchronize(where)
        elapsed_ms = (time.perf_counter() - start) * 1000
        undeclared = set(outcome.outputs) - set(self.outputs)
        if undeclared:
            raise RuntimeError(f"{self.name} reported undeclared outputs {sorted(undeclared)}")
        return DemoResult(
            demo=self.name,
            version=self.version,
            params=params.model_dump(mode="json"),
            device=where.type,
            outputs=outcome.outputs,
            theory=outcome.theory,
            series=outcome.series,
            notes=outcome.notes,
            elapsed_ms=elapsed_ms,
        )

    def info(self) -> DemoInfo:
        """This demo's description for ``GET /demos``."""
        return DemoInfo(
            name=self.name,
            version=self.version,
            title=self.title,
            description=self.description,
            seeded="seed" in self.params.model_fields,
            params=param_specs(self.params),
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
                for spec in param_specs(self.params)
                if spec.minimum is not None and spec.choices is None and spec.name != "seed"
            }
        )

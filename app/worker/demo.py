"""One demo: its name, parameters and compute function, and the result it returns.

A demo's interface (parameters, outputs, budget) is declared once, without
torch, in ``app/demos/specs/``; a worker module adds a compute function
``(params, device) -> Outcome`` and a :class:`Demo` that ties the two together.
:meth:`Demo.run` times the computation and wraps the :class:`Outcome` into a
:class:`DemoResult`, the JSON the worker sends back.
"""

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import torch
from pydantic import BaseModel, ConfigDict, model_validator

from app.demos.params import DemoParams, Scalar
from app.demos.spec import DemoInfo, DemoSpec
from app.worker.device import synchronize

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


@dataclass(frozen=True)
class Demo(Generic[P]):
    """A demo's interface (:class:`~app.demos.spec.DemoSpec`) and its computation.

    Attributes:
        spec: name, parameters, outputs and budget, shared with the web server.
        compute: ``(params, device) -> Outcome``. Runs under
            ``torch.inference_mode``; must be deterministic for a given seed.
    """

    spec: DemoSpec[P]
    compute: Callable[[P, torch.device], Outcome]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def version(self) -> int:
        return self.spec.version

    @property
    def uses_device(self) -> bool:
        return self.spec.uses_device

    @property
    def params(self) -> type[P]:
        return self.spec.params

    @property
    def outputs(self) -> Mapping[str, str]:
        return self.spec.outputs

    @property
    def worst_cases(self) -> tuple[Mapping[str, Any], ...]:
        return self.spec.worst_cases

    def validate(self, raw: object) -> P:
        """Validate request parameters (:meth:`DemoSpec.validate`)."""
        return self.spec.validate(raw)

    def info(self) -> DemoInfo:
        """This demo's description for ``GET /demos``."""
        return self.spec.info()

    def smallest(self) -> P:
        """The cheapest parameters (:meth:`DemoSpec.smallest`), to warm up and test edges."""
        return self.spec.smallest()

    def run(self, params: P, device: torch.device) -> DemoResult:
        """Compute the demo on ``device`` and time it.

        Raises:
            RuntimeError: the compute function reported an output the demo
                does not declare (a bug in the demo, not in the request).
        """
        where = device if self.spec.uses_device else torch.device("cpu")
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
            version=self.spec.version,
            params=params.model_dump(mode="json"),
            device=where.type,
            outputs=outcome.outputs,
            theory=outcome.theory,
            series=outcome.series,
            notes=outcome.notes,
            elapsed_ms=elapsed_ms,
        )

"""Demo parameters: the base model, their JSON description, and messages for bad values.

Every demo declares its parameters as a subclass of :class:`DemoParams` whose
fields carry a default, bounds (``ge``/``le``) or choices (``Literal``), a short
``title`` and a ``description``. From that one declaration come the form the
web app builds (:func:`param_specs`) and the message a user sees for a bad
value (:func:`problems_from_error`), so the two cannot drift apart.

This module does not import torch: the web server and the worker share it.
"""

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

SEED_MAX = 2**31 - 1

Seed = Annotated[
    int,
    Field(
        ge=0,
        le=SEED_MAX,
        title="Seed",
        description="Seed of the random generator: the same seed gives the same numbers "
        "on the same device.",
    ),
]
"""The ``seed`` field every random demo declares (last, so forms show it last)."""

ParamType = Literal["integer", "number", "boolean", "string"]
Scalar = int | float | bool | str


class DemoParams(BaseModel):
    """Base of every demo's parameters: immutable, and unknown names are errors.

    An unknown name is almost always a typo (``dk`` for ``d_k``); silently
    ignoring it would run the demo with the default and show the wrong number.
    """

    # Strict: a JSON ``true`` is not the integer 1 and ``"128"`` is not 128.
    # Form strings are typed by DemoSpec.resolve before they get here.
    # validate_default: pydantic skips field validators for omitted values, so a
    # budget check on ``samples`` would not run when only ``d_k`` is sent.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_default=True)


class ParamSpec(BaseModel):
    """How one parameter looks to a client: enough to build a form control.

    Example:
        >>> from pydantic import Field
        >>> class Example(DemoParams):
        ...     d_k: int = Field(128, ge=1, le=4096, title="d_k", description="Key size.")
        >>> spec = param_specs(Example)[0]
        >>> (spec.name, spec.type, spec.default, spec.minimum, spec.maximum)
        ('d_k', 'integer', 128, 1, 4096)
        >>> spec.requirement()
        'an integer between 1 and 4096'
    """

    name: str
    type: ParamType
    default: Scalar
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: list[Scalar] | None = None
    label: str
    description: str

    def requirement(self) -> str:
        """What a valid value is, in words: ``'an integer between 1 and 4096'``."""
        if self.choices is not None:
            return "one of " + ", ".join(_show(choice) for choice in self.choices)
        if self.type == "boolean":
            return "true or false"
        noun = {"integer": "an integer", "number": "a number", "string": "a string"}[self.type]
        if self.minimum is not None and self.maximum is not None:
            return f"{noun} between {_show(self.minimum)} and {_show(self.maximum)}"
        if self.minimum is not None:
            return f"{noun} of at least {_show(self.minimum)}"
        if self.maximum is not None:
            return f"{noun} of at most {_show(self.maximum)}"
        return noun


@dataclass(frozen=True)
class ParamProblem:
    """One thing wrong with a request's parameters.

    Attributes:
        param: the parameter's name, or None when the problem is the body
            as a whole (not a JSON object, say).
        message: what to fix, naming the parameter and what it accepts.
    """

    param: str | None
    message: str

    def as_json(self) -> dict[str, str | None]:
        """The problem as it appears in a 422 response's ``detail`` list."""
        return {"param": self.param, "message": self.message}


class InvalidParams(ValueError):
    """A request's parameters do not validate; ``problems`` says which and why."""

    def __init__(self, problems: list[ParamProblem]) -> None:
        super().__init__("; ".join(problem.message for problem in problems))
        self.problems = problems


def param_specs(model: type[DemoParams]) -> list[ParamSpec]:
    """Describe every field of a params model, in declaration order.

    Args:
        model: a :class:`DemoParams` subclass.

    Returns:
        One :class:`ParamSpec` per field.

    Raises:
        TypeError: a field has a type a form cannot show (a list, say): the
            demo's author must fix the declaration.
    """
    specs = []
    for name, field in model.model_fields.items():
        choices = _choices(field.annotation)
        if choices is not None:
            kind = _kind(type(choices[0]))
        elif isinstance(field.annotation, type):
            kind = _kind(field.annotation)
        else:
            raise TypeError(f"{model.__name__}.{name}: unsupported type {field.annotation!r}")
        minimum = maximum = None
        for constraint in field.metadata:
            if isinstance(constraint, annotated_types.Ge):
                minimum = _bound(constraint.ge)
            elif isinstance(constraint, annotated_types.Le):
                maximum = _bound(constraint.le)
        specs.append(
            ParamSpec(
                name=name,
                type=kind,
                default=field.default,
                minimum=minimum,
                maximum=maximum,
                choices=list(choices) if choices is not None else None,
                label=field.title or name,
                description=field.description or "",
            )
        )
    return specs


def problems_from_error(
    demo: str, model: type[DemoParams], error: ValidationError
) -> list[ParamProblem]:
    """Turn pydantic's errors into one message per parameter that says what to fix.

    Args:
        demo: the demo's name, for the message about an unknown parameter.
        model: the params model that raised ``error``.
        error: the validation error.

    Returns:
        Problems in the order pydantic found them, one per parameter.
    """
    specs = {spec.name: spec for spec in param_specs(model)}
    problems: list[ParamProblem] = []
    seen: set[str | None] = set()
    for detail in error.errors():
        loc = detail["loc"]
        param = str(loc[0]) if loc else None
        if param in seen:
            continue  # a value can fail several checks; the first message suffices
        seen.add(param)
        given = _given(detail.get("input"))
        if param is None:
            message = 'the parameters must be a JSON object such as {"seed": 1}'
        elif detail["type"] == "extra_forbidden":
            message = f"unknown parameter '{param}': {demo} takes " + (
                ", ".join(specs) or "no parameters"
            )
        elif param in specs and detail["type"] in _TYPE_OR_BOUND_ERRORS:
            message = f"{param} must be {specs[param].requirement()}, got {given}"
        else:
            # A demo's own check (a budget on a product of parameters): its
            # message already names the parameters and the limit.
            message = detail["msg"]
        problems.append(ParamProblem(param=param, message=message))
    return problems


# Pydantic error types that mean "not the right type" or "outside the bounds":
# for these the field's own description (its bounds or choices) is the message.
_TYPE_OR_BOUND_ERRORS = frozenset(
    {
        "bool_parsing",
        "bool_type",
        "finite_number",
        "float_parsing",
        "float_type",
        "greater_than",
        "greater_than_equal",
        "int_from_float",
        "int_parsing",
        "int_parsing_size",
        "int_type",
        "less_than",
        "less_than_equal",
        "literal_error",
        "string_type",
    }
)


def _choices(annotation: Any) -> tuple[Scalar, ...] | None:
    return get_args(annotation) if get_origin(annotation) is Literal else None


def _kind(python_type: type) -> ParamType:
    # bool before int: bool is a subclass of int.
    if issubclass(python_type, bool):
        return "boolean"
    if issubclass(python_type, int):
        return "integer"
    if issubclass(python_type, float):
        return "number"
    if issubclass(python_type, str):
        return "string"
    raise TypeError(f"unsupported parameter type {python_type!r}")


def _bound(value: object) -> int | float:
    if isinstance(value, int | float):
        return value
    raise TypeError(f"bound {value!r} is not a number")


def _show(value: Scalar) -> str:
    """A bound or choice as a user would type it in JSON: 4096, 1e-06, "sqrt_dk"."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _given(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)

"""What every demo promises: declared outputs, finite JSON, reproducible seeds, sane bounds."""

import doctest
import importlib
import json
import pkgutil
from typing import Any

import pytest
import torch

import app.worker
from app.demos.params import param_specs
from app.worker.demo import Demo
from app.worker.demos import DEMOS, UnknownDemo, get_demo
from tests.worker.conftest import SMALL, RunDemo

SEEDED = [name for name, demo in DEMOS.items() if "seed" in demo.params.model_fields]


def test_every_demo_has_small_test_parameters() -> None:
    assert set(SMALL) == set(DEMOS)


@pytest.mark.parametrize("name", list(DEMOS))
def test_result_is_complete_json(run: RunDemo, name: str) -> None:
    result = run(name, **SMALL[name])
    demo = get_demo(name)
    assert result.demo == name
    assert result.version == demo.version >= 1
    assert result.device == "cpu"
    assert result.outputs
    assert set(result.outputs) <= set(demo.outputs)
    assert set(result.theory) <= set(result.outputs)
    assert result.series
    assert result.elapsed_ms >= 0
    # The params echo every field, defaults included, so the result can be replayed.
    assert set(result.params) == set(demo.params.model_fields)
    assert demo.validate(result.params).model_dump() == result.params
    # Strict JSON (no NaN or Infinity) survives the round trip.
    assert json.loads(json.dumps(result.model_dump(), allow_nan=False)) == result.model_dump()


@pytest.mark.parametrize("name", list(DEMOS))
def test_runs_at_the_smallest_parameters(cpu: torch.device, name: str) -> None:
    # The worker warms up with these at start-up: a failure here stops it.
    demo = get_demo(name)
    assert demo.run(demo.smallest(), cpu).outputs


@pytest.mark.parametrize("name", SEEDED)
def test_same_seed_same_numbers(run: RunDemo, name: str) -> None:
    first = run(name, **SMALL[name], seed=7)
    second = run(name, **SMALL[name], seed=7)
    assert first.outputs == second.outputs
    assert first.series == second.series


@pytest.mark.parametrize("name", SEEDED)
def test_another_seed_other_numbers(run: RunDemo, name: str) -> None:
    first = run(name, **SMALL[name], seed=1)
    second = run(name, **SMALL[name], seed=2)
    assert first.outputs != second.outputs


@pytest.mark.parametrize("name", list(DEMOS))
def test_worst_cases_are_valid_parameters(name: str) -> None:
    demo = get_demo(name)
    assert demo.worst_cases, "the budget benchmark needs the demo's costliest parameters"
    for worst in demo.worst_cases:
        demo.validate(worst)


@pytest.mark.parametrize("name", list(DEMOS))
def test_parameters_are_described_for_a_form(name: str) -> None:
    demo: Demo[Any] = get_demo(name)
    for spec in param_specs(demo.params):
        assert spec.label and spec.description, f"{name}.{spec.name} needs a title and description"
        assert "|" not in spec.description, "descriptions go into Markdown tables"
        if spec.type in ("integer", "number") and spec.choices is None:
            assert spec.minimum is not None and spec.maximum is not None, (
                f"{name}.{spec.name} needs bounds: they cap the cost of a request"
            )
            assert spec.minimum <= spec.default <= spec.maximum  # type: ignore[operator]
    if name in SEEDED:
        assert list(demo.params.model_fields)[-1] == "seed", "seed comes last in the form"


@pytest.mark.parametrize("name", list(DEMOS))
def test_outputs_are_described(name: str) -> None:
    for output, description in get_demo(name).outputs.items():
        assert output.isidentifier() and description
        assert "|" not in description, "descriptions go into Markdown tables"


def test_demo_names_are_snake_case() -> None:
    for name in DEMOS:
        assert name.isidentifier() and name == name.lower()


def test_unknown_demo_lists_the_demos() -> None:
    with pytest.raises(UnknownDemo, match="the demos are score_variance, "):
        get_demo("score-variance")


def test_table_demos_run_on_the_cpu_whatever_the_device() -> None:
    # Plain arithmetic (scheduling and KV bookkeeping in `batching`), the gloo ranks (CPU processes),
    # scikit-learn's KMeans and bm25s/scikit-learn in `retrieval_hybrid` (CPU only), the numpy
    # event simulation in `systems_capacity` and the at most 30 × 30 binomial cells scored by
    # SciPy/scikit-learn in `position_bias` and faiss-cpu in `ann_index` (CPU only) need no GPU;
    # reporting "cuda" for them would mislead.
    assert {name for name, demo in DEMOS.items() if not demo.uses_device} == {
        "collectives",
        "divisor",
        "kv_cache",
        "llama_params",
        "pipeline_schedule",
        "zero_memory",
        "training_compute",
        "kmeans_init",
        "inference_roofline",
        "batching",
        "retrieval_hybrid",
        "systems_capacity",
        "position_bias",
        "ann_index",
    }


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", list(DEMOS))
def test_runs_on_cuda(name: str) -> None:
    demo = get_demo(name)
    result = demo.run(demo.validate(SMALL[name]), torch.device("cuda"))
    assert result.device == ("cuda" if demo.uses_device else "cpu")


def _worker_modules() -> list[str]:
    return [
        info.name
        for info in pkgutil.walk_packages(app.worker.__path__, prefix="app.worker.")
        if not info.ispkg or info.name == "app.worker.demos"
    ]


@pytest.mark.parametrize("module", _worker_modules())
def test_docstring_examples_run(module: str) -> None:
    failures, _ = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_the_worker_runs_every_demo_of_the_catalog_with_its_own_spec() -> None:
    # One declaration per demo: the worker's Demo wraps the very spec the web reads.
    from app.demos import CATALOG

    assert list(DEMOS) == list(CATALOG)
    assert all(DEMOS[name].spec is CATALOG[name] for name in CATALOG)

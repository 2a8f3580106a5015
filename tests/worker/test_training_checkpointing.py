"""activation_checkpointing against hand counts, autograd's own saved tensors and FlopCounterMode.

References, independent of the demo's code: which tensors an op keeps for backward
can be read back from the autograd graph itself (each node's ``_saved_*``
attributes), without any hook; by hand, ``addmm`` keeps its input (and the
weight), GELU its input, LayerNorm its input, mean and rstd. Chen et al. 2016
(arXiv:1604.06174, §4.1, §4.3): checkpoints keep each segment's input and the
backward pass rebuilds one segment at a time, for one extra forward pass.
FLOPs: a Linear of W weights costs 2·T·W forward and 4·T·W backward (input and
weight gradients), which FlopCounterMode counts too.
"""

import pytest
import torch
from fastapi.testclient import TestClient
from torch.utils.flop_counter import FlopCounterMode

from app.demos.specs.training_checkpointing import CheckpointingParams
from app.worker.demos.training_checkpointing import build
from tests.worker.conftest import RunDemo


def graph_saved_bytes(output: torch.Tensor, weights: set[int]) -> int:
    """Bytes of every tensor the autograd graph of ``output`` keeps, weights excluded,
    each storage once: read from the nodes' ``_saved_*`` attributes."""
    storages: dict[int, int] = {}
    seen, stack = set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for attr in dir(node):
            if attr.startswith("_saved_"):
                value = getattr(node, attr)
                if isinstance(value, torch.Tensor) and value.numel():
                    storage = value.untyped_storage()
                    if storage.data_ptr() not in weights:
                        storages[storage.data_ptr()] = storage.nbytes()
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sum(storages.values())


def plain_step(params: CheckpointingParams) -> tuple[int, float]:
    """Saved bytes (from the graph) and FlopCounterMode's FLOPs of one step, no checkpoints."""
    cpu = torch.device("cpu")
    blocks = build(params, cpu)
    weights = {p.untyped_storage().data_ptr() for p in blocks.parameters()}
    x = torch.randn(params.tokens, params.d, requires_grad=True)
    with FlopCounterMode(display=False) as flops:
        h = x
        for block in blocks:
            h = block(h)
        saved = graph_saved_bytes(h, weights)
        torch.autograd.backward(h.sum())
    return saved, flops.get_total_flops()


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"block": "prenorm_mlp"},
        {"block": "prenorm_mlp", "layers": 3, "d": 40, "tokens": 7},
        {"layers": 5, "d": 24, "tokens": 33},
    ],
)
def test_saved_bytes_and_flops_match_autograd_and_flop_counter(
    run: RunDemo, params: dict[str, object]
) -> None:
    result = run("activation_checkpointing", **params)
    saved, flops = plain_step(CheckpointingParams.model_validate(params))
    assert result.outputs["saved_bytes_without"] == saved
    assert result.outputs["flops_without"] == flops


@pytest.mark.parametrize(("layers", "d", "tokens"), [(16, 256, 64), (3, 40, 7)])
def test_hand_counts_of_what_a_block_keeps(run: RunDemo, layers: int, d: int, tokens: int) -> None:
    size = dict(layers=layers, d=d, tokens=tokens)
    act = tokens * d * 4
    # Linear keeps its input, GELU keeps its input (the Linear's output): 2 activations.
    outputs = run("activation_checkpointing", block="linear_gelu", **size).outputs
    assert outputs["activation_bytes"] == act
    assert outputs["saved_bytes_without"] == layers * 2 * act
    # LayerNorm keeps x, its mean and rstd (tokens each); up keeps LN(x); GELU and down keep
    # a tokens × 4d tensor each.
    outputs = run("activation_checkpointing", block="prenorm_mlp", **size).outputs
    assert outputs["saved_bytes_without"] == layers * ((1 + 1 + 4 + 4) * act + 2 * tokens * 4)


@pytest.mark.parametrize(
    ("per_segment", "kept", "rebuilt"),
    [(1, 16, 2), (2, 8, 4), (4, 4, 8), (8, 2, 16), (16, 1, 32)],
)
def test_the_cards_sixteen_block_table(
    run: RunDemo, per_segment: int, kept: int, rebuilt: int
) -> None:
    # content/training/gradient-checkpointing.md: 16 blocks of Linear(256, 256) + GELU,
    # batch 64; 32 activations kept without checkpoints, k kept and 32/k rebuilt with k.
    outputs = run("activation_checkpointing", blocks_per_segment=per_segment).outputs
    assert outputs["saved_without"] == 32
    assert outputs["saved_with"] == kept
    assert outputs["segment_saved"] == rebuilt
    assert outputs["linear_calls_without"] == 16
    assert outputs["linear_calls_with"] == 32  # every Linear runs twice: one extra forward
    assert outputs["flops_with"] / outputs["flops_without"] == pytest.approx(8 / 6)
    assert outputs["max_grad_difference"] == 0


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"blocks_per_segment": 4},
        {"blocks_per_segment": 16},
        {"block": "prenorm_mlp", "blocks_per_segment": 2, "d": 64},
        {"layers": 6, "d": 32, "tokens": 100, "blocks_per_segment": 3},
    ],
)
def test_the_peak_falls_by_what_is_not_kept(run: RunDemo, params: dict[str, object]) -> None:
    # Before the backward pass reaches a segment, only checkpoints are kept; the segment's
    # rebuilt tensors come on top, less its input (a checkpoint already). The temporaries
    # of the backward pass are the same in both runs and cancel.
    result = run("activation_checkpointing", **params)
    outputs = result.outputs
    expected = outputs["saved_without"] - outputs["saved_with"] - (outputs["segment_saved"] - 1)
    assert outputs["peak_saving"] == pytest.approx(expected, abs=0.05)
    assert result.theory["peak_saving"] == pytest.approx(expected, abs=1e-9)
    assert outputs["peak_without"] >= outputs["saved_without"]


def test_early_stop_skips_the_last_multiply_of_each_segment(run: RunDemo) -> None:
    # The MLP's down projection keeps its input and weight: once the input is rebuilt the
    # non-reentrant checkpoint stops, so the down multiply is not redone.
    d, tokens, layers = 256, 64, 16
    for per_segment in (1, 4):
        outputs = run(
            "activation_checkpointing", block="prenorm_mlp", blocks_per_segment=per_segment
        ).outputs
        segments = layers // per_segment
        forward = 2 * tokens * 8 * d * d * layers
        assert outputs["flops_without"] == 3 * forward
        assert outputs["flops_with"] == 4 * forward - segments * 2 * tokens * 4 * d * d
        assert outputs["linear_calls_with"] == 4 * layers - segments
        assert outputs["recompute_share"] == pytest.approx(1 - segments / (2 * layers))
        assert outputs["max_grad_difference"] == 0


def test_theory_stands_beside_each_measurement(run: RunDemo) -> None:
    result = run("activation_checkpointing", block="prenorm_mlp", blocks_per_segment=2)
    for name, value in result.theory.items():
        assert result.outputs[name] == pytest.approx(value, rel=1e-3, abs=0.05), name


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({"layers": 16, "blocks_per_segment": 3}, "blocks_per_segment", "must divide layers"),
        ({"layers": 64, "d": 1024}, "d", "lower d to 362 or less"),
        ({"block": "prenorm_mlp", "layers": 16, "d": 256, "tokens": 129}, "tokens", "to 128 "),
        ({"layers": 64, "d": 64, "tokens": 1025}, "tokens", "lower tokens to 1024 or less"),
        ({"block": "attention"}, "block", None),
    ],
)
def test_bad_parameters_are_422(
    client: TestClient, body: dict[str, object], param: str, message: str | None
) -> None:
    response = client.post("/demos/activation_checkpointing", json=body)
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["param"] == param
    if message is not None:
        assert message in problem["message"]

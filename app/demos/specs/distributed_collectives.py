"""``collectives``: all-reduce, reduce-scatter, all-gather and a ring all-reduce on real ranks.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/distributed_collectives.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MIN_ELEMENTS, MAX_ELEMENTS = 8, 65_536
"""Bounds on each rank's buffer: 512 KiB in fp64 at most (every rank draws all N buffers)."""


class CollectivesParams(DemoParams):
    ranks: int = Field(
        4,
        ge=2,
        le=8,
        title="Ranks N",
        description="Processes in the gloo group, each a CPU process on this machine.",
    )
    # validate_default: the multiple-of-ranks check must also run on an omitted value.
    elements: int = Field(
        40_320,
        ge=MIN_ELEMENTS,
        le=MAX_ELEMENTS,
        validate_default=True,
        title="Elements per rank",
        description="Length of each rank's buffer; a multiple of the ranks (40,320 = 8! suits "
        "every rank count), since gloo's all-gather needs equal chunks.",
    )
    values: Literal["integers", "normal"] = Field(
        "integers",
        title="Values",
        description="integers: whole numbers from -1000 to 999, whose sums are exact in any "
        "order; normal: N(0, 1) floats, whose sums round differently in another order.",
    )
    dtype: Literal["float64", "float32"] = Field(
        "float64", title="Precision", description="Element type of the buffers."
    )
    hidden: int = Field(
        64,
        ge=4,
        le=256,
        title="MLP hidden size h",
        description="Width of the tensor-parallel MLP: Linear(h, 4h), GeLU, Linear(4h, h).",
    )
    tokens: int = Field(8, ge=1, le=64, title="MLP tokens", description="Rows of the MLP's input.")
    seed: Seed = 0

    @field_validator("elements")
    @classmethod
    def _multiple_of_ranks(cls, elements: int, info: ValidationInfo) -> int:
        ranks = info.data.get("ranks")
        if ranks is not None and elements % ranks:
            below = elements - elements % ranks
            near = [n for n in (below, below + ranks) if MIN_ELEMENTS <= n <= MAX_ELEMENTS]
            raise PydanticCustomError(
                "multiple_of_ranks",
                "elements must be a multiple of ranks ({ranks}), got {elements}: try {near}",
                {
                    "ranks": ranks,
                    "elements": elements,
                    "near": " or ".join(f"{n:,}" for n in near),
                },
            )
        return elements


COLLECTIVES = DemoSpec(
    name="collectives",
    version=1,
    title="All-reduce = reduce-scatter + all-gather, on real ranks",
    description="N CPU processes in a torch.distributed gloo group: all_reduce against "
    "reduce_scatter then all_gather and the sum computed locally; a ring all-reduce written "
    "with send and recv, its bytes per rank against 2(N−1)/N · S; and a Megatron-style "
    "column-then-row tensor-parallel MLP against the unsplit one.",
    params=CollectivesParams,
    outputs={
        "buffer_bytes": "S: bytes of each rank's buffer.",
        "sent_bytes": "Bytes each rank sent in the ring all-reduce (the most over ranks).",
        "received_bytes": "Bytes each rank received in the ring all-reduce (the most over ranks).",
        "sent_over_buffer": "sent_bytes / S.",
        "reduce_scatter_sent_over_buffer": "Bytes sent in the ring's reduce-scatter phase alone, "
        "over S.",
        "sent_spread": "Most minus fewest bytes sent by a rank (0: every rank sends the same).",
        "ring_steps": "Sequential send/receive steps of the ring.",
        "allreduce_vs_rs_ag_mismatch": "Share of elements where dist.all_reduce differs from "
        "dist.reduce_scatter followed by dist.all_gather.",
        "allreduce_vs_local_mismatch": "Share of elements where dist.all_reduce differs from the "
        "sum of the ranks' buffers computed locally, rank 0 first.",
        "ring_vs_allreduce_mismatch": "Share of elements where the ring all-reduce differs from "
        "dist.all_reduce.",
        "ring_vs_local_mismatch": "Share of elements where the ring all-reduce differs from the "
        "local sum.",
        "max_abs_error": "Largest difference of any of the three results from the local sum.",
        "ranks_identical": "1 when every rank ended with bit-identical results, else 0.",
        "mlp_max_abs_diff": "Largest difference between the tensor-parallel MLP (one all-reduce) "
        "and the unsplit MLP.",
        "mlp_output_max_abs": "Largest magnitude in the MLP's output, for scale.",
        "row_split_max_abs_diff": "The same difference when the first weight is split by rows "
        "instead and each rank applies GeLU to its partial sums: not 0.",
    },
    uses_device=False,
    worst_cases=(
        {"ranks": 8, "elements": MAX_ELEMENTS, "values": "normal", "hidden": 256, "tokens": 64},
    ),
)

"""``pipeline_schedule``: GPipe and 1F1B pipeline schedules simulated step by step.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/distributed_pipeline.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams
from app.demos.spec import DemoSpec


class PipelineParams(DemoParams):
    stages: int = Field(
        4,
        ge=1,
        le=32,
        title="Stages p",
        description="Pipeline stages, one device each, every stage equally fast.",
    )
    microbatches: int = Field(
        8,
        ge=1,
        le=256,
        title="Micro-batches m",
        description="Micro-batches per batch; the optimizer steps once all are done (a flush).",
    )
    backward_ratio: float = Field(
        2.0,
        ge=0.25,
        le=8.0,
        title="Backward / forward time",
        description="Time of a micro-batch's backward pass on one stage; its forward pass takes 1.",
    )


PIPELINE_SCHEDULE = DemoSpec(
    name="pipeline_schedule",
    version=1,
    title="Pipeline bubble and stashed activations: GPipe versus 1F1B",
    description="Each stage runs its forward and backward passes in schedule order as soon as "
    "their inputs exist: the idle share of the time against (p−1)/(m+p−1), and how many "
    "micro-batches' activations each stage holds at once.",
    params=PipelineParams,
    outputs={
        "gpipe_bubble": "GPipe: idle time over total time, summed over stages.",
        "one_f_one_b_bubble": "1F1B: idle time over total time, summed over stages.",
        "gpipe_bubble_over_ideal": "GPipe: idle time over the ideal time m(t_f + t_b) per "
        "stage (Megatron-LM's bubble time fraction).",
        "one_f_one_b_bubble_over_ideal": "1F1B: the same.",
        "gpipe_time": "GPipe: time from the first forward to the last backward.",
        "one_f_one_b_time": "1F1B: the same.",
        "ideal_time": "m(t_f + t_b): one stage's work, with no idle time.",
        "gpipe_peak_activations": "GPipe: most micro-batches whose activations one stage holds "
        "at once (forward done, backward not).",
        "one_f_one_b_peak_activations": "1F1B: the same.",
        "one_f_one_b_last_stage_peak": "1F1B: the same on the last stage.",
    },
    uses_device=False,
    worst_cases=({"stages": 32, "microbatches": 256, "backward_ratio": 0.25},),
)

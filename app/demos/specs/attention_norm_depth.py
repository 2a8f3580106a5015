"""``norm_depth``: gradient norms through a deep stack at init, pre-norm against post-norm.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/attention_norm_depth.py``. No torch here.
"""

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_LAYER_RUNS = 96  # layers × trials: each trial runs both placements forward and backward
# d is capped at 64: at d = 128 the worst case took 0.65 s of CPU, at 64 about 0.3 s.


class NormDepthParams(DemoParams):
    layers: int = Field(
        12, ge=1, le=48, title="Layers L", description="Residual layers (attention + FFN each)."
    )
    norm: Literal["layernorm", "rmsnorm"] = Field(
        "layernorm",
        title="Normalisation",
        description="torch.nn.LayerNorm or torch.nn.RMSNorm, in every sub-layer.",
    )
    d: int = Field(64, ge=8, le=64, title="Width d", description="Model width (FFN 4d).")
    tokens: int = Field(
        64, ge=4, le=64, title="Tokens", description="Sequence length of the random input."
    )
    trials: int = Field(
        4,
        ge=1,
        le=8,
        title="Trials",
        description="Independent initialisations; the gradient norms are averaged over them.",
    )
    seed: Seed = 0

    @field_validator("trials")
    @classmethod
    def _within_budget(cls, trials: int, info: ValidationInfo) -> int:
        layers = info.data.get("layers")
        if layers is not None and layers * trials > MAX_LAYER_RUNS:
            raise PydanticCustomError(
                "budget",
                "layers × trials must be at most {limit}: lower trials to {most} or fewer for "
                "{layers} layers",
                {"limit": MAX_LAYER_RUNS, "most": MAX_LAYER_RUNS // layers, "layers": layers},
            )
        return trials


NORM_DEPTH = DemoSpec(
    name="norm_depth",
    version=1,
    title="Pre-norm against post-norm: gradient norms with depth at initialisation",
    description="Builds a stack of L residual layers (causal attention and a ReLU FFN) with "
    "Xavier initialisation, once with the norm inside each residual branch (pre-norm) and once "
    "after each residual addition (post-norm), and measures the gradient norm of every layer's "
    "second FFN matrix for a cross-entropy loss on random labels.",
    params=NormDepthParams,
    outputs={
        "pre_first_grad": "Pre-norm: gradient norm of layer 1's second FFN matrix (mean over "
        "trials).",
        "pre_last_grad": "Pre-norm: the same for layer L.",
        "post_first_grad": "Post-norm: gradient norm of layer 1's second FFN matrix.",
        "post_last_grad": "Post-norm: the same for layer L.",
        "pre_last_over_first": "pre_last_grad / pre_first_grad.",
        "post_last_over_first": "post_last_grad / post_first_grad.",
        "post_over_pre_last": "post_last_grad / pre_last_grad: how much larger post-norm's "
        "last-layer gradient is.",
        "rms_vs_layernorm_centered": "Largest difference between torch.nn.RMSNorm and "
        "torch.nn.LayerNorm on zero-mean input (0 up to rounding).",
        "rms_vs_layernorm_raw": "The same on input with mean 1: not 0.",
    },
    worst_cases=(
        {"layers": 48, "d": 64, "tokens": 64, "trials": 2, "norm": "layernorm"},
        {"layers": 12, "d": 64, "tokens": 64, "trials": 8, "norm": "rmsnorm"},
    ),
)

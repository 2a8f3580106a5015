"""``softmax_saturation`` and ``temperature``: what the spread of the logits does to softmax.

Parameters and description of the demo, shared by the web server (forms, card
checks) and the worker (validation); the computation is in
``app/worker/demos/saturation.py``. No torch here.
"""

from pydantic import Field

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

D_K = Field(128, ge=1, le=1024, title="d_k", description="Components in each query and key.")


KEYS = Field(128, ge=2, le=1024, title="Keys", description="Keys each query attends to.")


class SaturationParams(DemoParams):
    d_k: int = D_K
    keys: int = KEYS
    rows: int = Field(2000, ge=10, le=5000, title="Rows", description="Queries (softmax rows).")
    scaled: bool = Field(
        True, title="Divide by sqrt(d_k)", description="Divide q·k by sqrt(d_k) before softmax."
    )
    jacobian_threshold: float = Field(
        0.01,
        ge=1e-6,
        le=1.0,
        title="Jacobian threshold",
        description="A row's softmax Jacobian counts as small below this Frobenius norm.",
    )
    seed: Seed = 0


class TemperatureParams(DemoParams):
    d_k: int = D_K
    keys: int = KEYS
    rows: int = Field(1000, ge=10, le=5000, title="Rows", description="Queries (softmax rows).")
    temperature: float = Field(
        1.0,
        ge=0.01,
        le=1000.0,
        title="Temperature T",
        description="softmax(q·k / T): T = sqrt(d_k) is the usual scaling, T = 1 none.",
    )
    seed: Seed = 0


SOFTMAX_SATURATION = DemoSpec(
    name="softmax_saturation",
    version=1,
    title="Softmax saturation without the sqrt(d_k) divisor",
    description="Softmax over q·k with and without dividing by sqrt(d_k): entropy, the largest "
    "weight, and how many rows saturate (max weight > 0.99) so their gradient vanishes.",
    params=SaturationParams,
    outputs={
        "mean_entropy": "Mean entropy of the softmax rows, in nats.",
        "max_entropy": "ln(keys): the entropy of uniform attention.",
        "mean_max_weight": "Mean of each row's largest weight.",
        "saturated_share": "Share of rows whose largest weight exceeds 0.99.",
        "small_jacobian_share": "Share of rows whose softmax Jacobian norm is below the threshold.",
        "median_jacobian_norm": "Median Frobenius norm of the rows' softmax Jacobians.",
        "logit_std": "Standard deviation of the logits fed to softmax.",
    },
    worst_cases=({"d_k": 1024, "keys": 1024, "rows": 5000, "scaled": False},),
)


TEMPERATURE = DemoSpec(
    name="temperature",
    version=1,
    title="Temperature versus dividing by sqrt(d_k)",
    description="softmax(q·k / T) for a range of temperatures: dividing by sqrt(d_k) is the "
    "temperature that brings the logits to unit variance.",
    params=TemperatureParams,
    outputs={
        "mean_entropy": "Mean softmax entropy at temperature T, in nats.",
        "entropy_at_sqrt_dk": "Mean entropy at T = sqrt(d_k) (the usual scaling).",
        "entropy_unscaled": "Mean entropy at T = 1 (no scaling).",
        "max_entropy": "ln(keys): the entropy of uniform attention.",
        "logit_std": "Standard deviation of q·k / T.",
        "sqrt_dk": "sqrt(d_k).",
    },
    worst_cases=({"d_k": 1024, "keys": 1024, "rows": 5000, "temperature": 0.01},),
)

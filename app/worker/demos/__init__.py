"""Every demo the worker runs, by name.

Add a demo by writing its module here and listing its :class:`Demo` in
:data:`DEMOS`; ``docs/demos.md`` must describe it (a test checks).
"""

from typing import Any

from app.worker.demo import Demo
from app.worker.demos.divisor import DIVISOR
from app.worker.demos.kv_cache import KV_CACHE
from app.worker.demos.quantization import QUANTIZED_K
from app.worker.demos.rope import ROPE
from app.worker.demos.saturation import SOFTMAX_SATURATION, TEMPERATURE
from app.worker.demos.sdpa import SDPA
from app.worker.demos.softcap import SOFTCAP
from app.worker.demos.softmax import ONLINE_SOFTMAX, STABLE_SOFTMAX
from app.worker.demos.training_compute import TRAINING_COMPUTE
from app.worker.demos.training_init_loss import INIT_LOSS
from app.worker.demos.training_llama import LLAMA_PARAMS
from app.worker.demos.training_optimizer_memory import OPTIMIZER_MEMORY
from app.worker.demos.training_precision import LOSS_SCALING
from app.worker.demos.variance import SCORE_VARIANCE

DEMOS: dict[str, Demo[Any]] = {
    demo.name: demo
    for demo in (
        SCORE_VARIANCE,
        SOFTMAX_SATURATION,
        TEMPERATURE,
        ROPE,
        QUANTIZED_K,
        ONLINE_SOFTMAX,
        STABLE_SOFTMAX,
        SDPA,
        SOFTCAP,
        DIVISOR,
        KV_CACHE,
        OPTIMIZER_MEMORY,
        LLAMA_PARAMS,
        INIT_LOSS,
        LOSS_SCALING,
        TRAINING_COMPUTE,
    )
}


class UnknownDemo(LookupError):
    """No demo has this name; the message lists the ones that exist."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown demo '{name}': the demos are {', '.join(DEMOS)}")
        self.name = name


def get_demo(name: str) -> Demo[Any]:
    """The demo called ``name``.

    Raises:
        UnknownDemo: no demo has that name.
    """
    try:
        return DEMOS[name]
    except KeyError:
        raise UnknownDemo(name) from None


__all__ = ["DEMOS", "UnknownDemo", "get_demo"]

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

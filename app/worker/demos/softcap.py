"""``softcap``: c·tanh(x/c) bounds the scores smoothly.

Gemma 2 caps attention logits at 50 and Grok-1 at 30. Near 0 the cap is almost
the identity (x − x³/(3c²)); far out it flattens to ±c and its slope
1 − tanh²(x/c) goes to 0, so a capped score stops receiving gradient.
"""

import math

import torch

from app.demos.specs import softcap as spec
from app.demos.specs.softcap import SoftcapParams
from app.worker.demo import Demo, Outcome, Series

CURVE_POINTS = 121


def softcap(x: torch.Tensor, cap: float) -> torch.Tensor:
    """cap·tanh(x/cap).

    Example:
        >>> values = softcap(torch.tensor([3.0, 100.0], dtype=torch.float64), 50.0)
        >>> [round(v, 4) for v in values.tolist()]
        [2.9964, 48.2014]
    """
    return cap * torch.tanh(x / cap)


def compute(params: SoftcapParams, device: torch.device) -> Outcome:
    """Cap one score and draw the curve over ±3c (fp64)."""
    x = torch.tensor(params.x, dtype=torch.float64, device=device)
    capped = softcap(x, params.cap).item()
    slope = 1 - math.tanh(params.x / params.cap) ** 2
    curve_x = torch.linspace(
        -3 * params.cap, 3 * params.cap, CURVE_POINTS, dtype=torch.float64, device=device
    )
    return Outcome(
        outputs={"capped": capped, "reduction": params.x - capped, "slope": slope},
        series=[
            Series(
                name=f"{params.cap:g}·tanh(x/{params.cap:g})",
                kind="line",
                x=curve_x.tolist(),
                y=softcap(curve_x, params.cap).tolist(),
                x_label="score x",
                y_label="capped score",
            ),
            Series(
                name="no cap",
                kind="line",
                x=curve_x.tolist(),
                y=curve_x.tolist(),
                x_label="score x",
                y_label="capped score",
            ),
        ],
    )


SOFTCAP = Demo(spec=spec.SOFTCAP, compute=compute)

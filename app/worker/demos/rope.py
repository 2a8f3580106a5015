"""``rope``: rotary position embeddings keep the variance and depend only on m − n.

RoPE (Su et al. 2021) rotates each pair of components (2i, 2i+1) of a query at
position m by the angle m·θ_i, θ_i = base^(−2i/d). A rotation keeps norms, so
for unit-variance q and k the variance of q·k stays d; and because
R_mᵀR_n = R_{n−m}, the score depends only on the offset m − n. In fp64 that
holds to about 1e-11; in fp32 the angle m·θ_i loses digits as m grows.

Vectors are held as their even and odd halves (rows × d/2 each), which is all
a rotation of pairs needs and spares interleaving copies.
"""

import math

import torch

from app.demos.specs import rope as spec
from app.demos.specs.rope import RopeParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import DTYPES, row_chunks
from app.worker.device import seeded

CURVE_POINTS = 512


def frequencies(d: int, base: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """θ_i = base^(−2i/d) for i < d/2, computed in ``dtype`` as reference code does."""
    return 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype, device=device) / d)


Pairs = tuple[torch.Tensor, torch.Tensor]
"""A batch of vectors as (components 2i, components 2i+1), each rows × d/2."""


def rotate(pairs: Pairs, positions: torch.Tensor, theta: torch.Tensor) -> Pairs:
    """Rotate each pair (2i, 2i+1) of every row by ``position·θ_i``.

    Example:
        >>> one = torch.tensor([[1.0]], dtype=torch.float64)
        >>> zero = torch.zeros(1, 1, dtype=torch.float64)
        >>> x, y = rotate((one, zero), torch.tensor([1.0], dtype=torch.float64),
        ...               torch.tensor([math.pi / 2], dtype=torch.float64))
        >>> round(x.item(), 12), y.item()
        (0.0, 1.0)
    """
    angles = positions[:, None] * theta[None, :]
    cos, sin = angles.cos(), angles.sin()
    even, odd = pairs
    return even * cos - odd * sin, even * sin + odd * cos


def dot(a: Pairs, b: Pairs) -> torch.Tensor:
    """Row-wise dot products of two batches of vectors held as pairs."""
    return (a[0] * b[0]).sum(-1) + (a[1] * b[1]).sum(-1)


def compute(params: RopeParams, device: torch.device) -> Outcome:
    """Measure variance, norms and shift invariance of rotated dot products."""
    dtype = DTYPES[params.dtype]
    generator = seeded(device, params.seed)
    theta = frequencies(params.d, params.base, dtype, device)
    half = params.d // 2

    def draw(rows: int) -> Pairs:
        # Drawn in fp32 and converted, so that both precisions rotate the same
        # vectors and differ only in the rotation's arithmetic (and fp32 draws
        # are three times faster). The components are independent, so the
        # even and odd halves are drawn apart, already in the shape rotate uses.
        even = torch.randn(rows, half, generator=generator, device=device)
        odd = torch.randn(rows, half, generator=generator, device=device)
        return even.to(dtype), odd.to(dtype)

    before, after = [], []
    norm_change = invariance = 0.0
    for start, stop in row_chunks(params.samples, params.d):
        q, k = draw(stop - start), draw(stop - start)
        m, n, shifted_m, shifted_n = (
            position.to(dtype)
            for position in _positions(generator, stop - start, params.max_position, device)
        )
        q_m, k_n = rotate(q, m, theta), rotate(k, n, theta)
        before.append(dot(q, k).double())
        after.append(dot(q_m, k_n).double())
        shifted = dot(rotate(q, shifted_m, theta), rotate(k, shifted_n, theta)).double()
        change = (dot(q_m, q_m) / dot(q, q)).sqrt() - 1
        norm_change = max(norm_change, change.abs().max().item())
        invariance = max(invariance, (after[-1] - shifted).abs().max().item())
    curve_x = torch.linspace(0, params.max_position - 1, min(CURVE_POINTS, params.max_position))
    curve_x = curve_x.round().to(dtype=dtype, device=device)
    even, odd = draw(1)
    probe = even.expand(len(curve_x), -1), odd.expand(len(curve_x), -1)
    curve = dot(rotate(probe, curve_x, theta), probe)
    return Outcome(
        outputs={
            "variance_before": torch.cat(before).var().item(),
            "variance_after": torch.cat(after).var().item(),
            "max_norm_change": norm_change,
            "invariance_error": invariance,
            "longest_wavelength": 2 * math.pi * params.base ** ((params.d - 2) / params.d),
        },
        theory={
            "variance_before": float(params.d),
            "variance_after": float(params.d),
            "max_norm_change": 0.0,
            "invariance_error": 0.0,
        },
        series=[
            Series(
                name="q_m · q_0 for one random q",
                kind="line",
                x=curve_x.tolist(),
                y=curve.tolist(),
                x_label="relative position m − n",
                y_label="score",
            )
        ],
    )


def _positions(
    generator: torch.Generator, rows: int, max_position: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random m, n and a shift t with m, n, m + t, n + t all in [0, max_position)."""
    m = torch.randint(max_position, (rows,), generator=generator, device=device)
    n = torch.randint(max_position, (rows,), generator=generator, device=device)
    low = -torch.minimum(m, n)
    high = max_position - 1 - torch.maximum(m, n)
    uniform = torch.rand(rows, generator=generator, dtype=torch.float64, device=device)
    shift = low + (uniform * (high - low + 1)).floor().long().clamp(max=high - low)
    return m, n, m + shift, n + shift


ROPE = Demo(spec=spec.ROPE, compute=compute)

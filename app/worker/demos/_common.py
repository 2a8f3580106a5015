"""Pieces several demos share: chunking, histograms and per-row softmax statistics."""

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from app.worker.demo import Series

CHUNK_ELEMENTS = 2**18
"""Elements per tensor per chunk (2 MiB in fp64): keeps peak memory flat in the sample count.

Measured on the largest score_variance request: 2**20 (8 MiB chunks) peaked at
about 210 MB above the idle process, as freed blocks of that size stay mapped
by the allocator; 2**18 peaked at 14 MB in the same time. Changing it changes
the random stream of the chunked demos: bump their versions.
"""

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def row_chunks(rows: int, width: int) -> Iterator[tuple[int, int]]:
    """Split ``rows`` rows of ``width`` elements into ``(start, stop)`` chunks.

    Each chunk holds at most :data:`CHUNK_ELEMENTS` elements (one row at least).

    Example:
        >>> list(row_chunks(5, 2**17))
        [(0, 2), (2, 4), (4, 5)]
    """
    step = max(1, CHUNK_ELEMENTS // max(1, width))
    for start in range(0, rows, step):
        yield start, min(rows, start + step)


def histogram(
    values: torch.Tensor,
    *,
    name: str,
    x_label: str,
    bins: int = 50,
    normal_variance: float | None = None,
) -> list[Series]:
    """Counts of ``values`` in ``bins`` equal-width bins spanning their range.

    Args:
        values: a 1-D tensor.
        name: the histogram's legend.
        x_label: what the values are.
        bins: how many bins.
        normal_variance: when given, add a line of the counts expected from
            the same number of draws of N(0, normal_variance), for comparison.

    Returns:
        The histogram series, then the normal curve when asked for.
    """
    low, high = values.min().item(), values.max().item()
    if high <= low:  # every value equal: give the single spike a visible width
        low, high = low - 0.5, high + 0.5
    counts = torch.histc(values, bins=bins, min=low, max=high)
    width = (high - low) / bins
    centres = [low + width * (i + 0.5) for i in range(bins)]
    series = [
        Series(
            name=name,
            kind="histogram",
            x=centres,
            y=counts.tolist(),
            x_label=x_label,
            y_label="count",
        )
    ]
    if normal_variance is not None:
        scale = values.numel() * width / math.sqrt(2 * math.pi * normal_variance)
        expected = [scale * math.exp(-(x * x) / (2 * normal_variance)) for x in centres]
        series.append(
            Series(
                name=f"normal, variance {normal_variance:.4g}",
                kind="line",
                x=centres,
                y=expected,
                x_label=x_label,
                y_label="count",
            )
        )
    return series


@dataclass(frozen=True)
class RowStats:
    """Per-row statistics of ``softmax(logits)``, each a tensor with one value per row."""

    entropy: torch.Tensor
    max_weight: torch.Tensor
    jacobian_norm: torch.Tensor


def row_stats(scores: torch.Tensor, divisor: float = 1.0) -> RowStats:
    """Entropy (nats), largest weight and softmax-Jacobian Frobenius norm of each row.

    Args:
        scores: one row of scores per query.
        divisor: softmax is taken of ``scores / divisor``, a chunk at a time,
            so no divided copy of the whole matrix is made.

    The Jacobian of softmax is ``diag(p) - p pᵀ``; its squared Frobenius norm
    has the closed form ``Σp² - 2Σp³ + (Σp²)²``, so no (keys × keys) matrix is
    built. In fp64 the cancellation in that sum leaves an absolute error near
    1e-8 in the norm, far below any threshold the demos accept.
    """
    chunks = [
        _row_stats(scores[a:b] / divisor) for a, b in row_chunks(scores.shape[0], scores.shape[1])
    ]
    return RowStats(*(torch.cat(parts) for parts in zip(*chunks, strict=True)))


def _row_stats(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    log_p = torch.log_softmax(logits, dim=-1)
    p = log_p.exp()
    entropy = -(p * log_p).sum(-1)
    square = (p * p).sum(-1)
    cube = (p * p * p).sum(-1)
    jacobian_norm = (square - 2 * cube + square * square).clamp_min(0).sqrt()
    return entropy, p.amax(-1), jacobian_norm


def attention_logits(
    generator: torch.Generator, *, rows: int, keys: int, d_k: int, device: torch.device
) -> torch.Tensor:
    """Unscaled scores ``q·k`` of ``rows`` queries against one set of ``keys`` keys.

    Queries and keys have independent unit-variance components (fp64), as in
    Vaswani et al.'s footnote 4. All rows share the keys, as the queries of one
    attention head do, which also keeps the draw count at (rows + keys) × d_k.
    Queries are drawn a chunk at a time, so only the scores are held whole.
    """
    key_vectors = torch.randn(keys, d_k, generator=generator, dtype=torch.float64, device=device)
    scores = torch.empty(rows, keys, dtype=torch.float64, device=device)
    for start, stop in row_chunks(rows, d_k):
        queries = torch.randn(
            stop - start, d_k, generator=generator, dtype=torch.float64, device=device
        )
        torch.matmul(queries, key_vectors.T, out=scores[start:stop])
    return scores

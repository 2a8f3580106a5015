"""``contrastive`` and ``matryoshka``: training and truncating embedding models.

**contrastive.** InfoNCE with in-batch negatives scores each query against the
B documents of its batch: the logits are the B × B cosine similarities divided
by a temperature τ, and the target of row i is column i (its own document), so
the loss is F.cross_entropy(S / τ, arange(B)). At initialisation the queries
and documents are independent random unit vectors: their cosines have mean 0
and variance exactly 1/d, the logits standard deviation σ = 1/(τ√d), and as for
an LM head at initialisation the loss is ln B + σ²/2 to leading order. ln B
holds only while σ is small: at τ = 0.01 and d = 128, σ ≈ 8.8 and the random
similarities alone decide the softmax. The gradient of row i's loss with
respect to a negative's similarity s_ij is p_ij / τ, so the negatives share the
gradient in proportion to their softmax probabilities: a small τ gives most of
it to the few most similar (hardest) negatives.

**matryoshka.** Embeddings whose per-dimension variance decays as k^−α (the
information front-loaded, as Matryoshka representation learning trains it to
be) are normalised, then searched on their first m dimensions only; recall@k
is measured against the exact full-dimension neighbours. The same vectors
after a random rotation (an orthogonal matrix, so the full-dimension
neighbours do not change) spread the variance evenly over the coordinates,
like an embedding trained without the nested loss, and truncating them loses
more; projecting on the top m principal components instead (PCA fitted on the
documents) recovers the front-loaded recall.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import retrieval_contrastive as spec
from app.demos.specs.retrieval_contrastive import ContrastiveParams, MatryoshkaParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- contrastive ---------------------------------------------------------------------

SWEEP = (0.01, 0.02, 0.05, 0.07, 0.1, 0.2, 0.5, 1.0, 2.0, 10.0)
"""Temperatures of the series: the range CLIP's learned τ can take (0.01 to its 0.07
start) and the larger values at which the loss settles at ln B."""

MAX_THEORY_SIGMA = 1.0
"""Logit standard deviation up to which the Gaussian-logit expansions are given as theory,
for B ≥ 64 and d ≥ 16: the next term of the loss, −(e^{σ²} − 1)/(2B), stays under 0.015
there; the effective number of negatives is within about 6% of (B − 1)e^{−σ²/2} at σ = 1
(over 10 seeds) and closer below. A cosine of d < 16 dimensions is too far from Gaussian."""


def unit_pairs(
    params: ContrastiveParams, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """B query and B document embeddings, unit-norm, fp64.

    Document i is a·q_i + √(1 − a²)·n_i, normalised, with n_i an independent random
    unit vector and a = ``alignment``: a = 0 makes the pairs independent, as a freshly
    initialised encoder would.
    """
    generator = seeded(device, params.seed)
    shape = (params.batch, params.dim)
    queries = F.normalize(
        torch.randn(shape, generator=generator, device=device, dtype=torch.float64), dim=1
    )
    noise = F.normalize(
        torch.randn(shape, generator=generator, device=device, dtype=torch.float64), dim=1
    )
    a = params.alignment
    docs = F.normalize(a * queries + math.sqrt(1 - a * a) * noise, dim=1)
    return queries, docs


def info_nce(similarity: torch.Tensor, temperature: float) -> torch.Tensor:
    """InfoNCE with in-batch negatives: row i's target is column i (PyTorch's cross-entropy)."""
    targets = torch.arange(similarity.shape[0], device=similarity.device)
    return F.cross_entropy(similarity / temperature, targets)


def negative_weights(similarity: torch.Tensor, temperature: float) -> torch.Tensor:
    """Each row's softmax over its negatives alone: their shares of the gradient.

    ∂L_i/∂s_ij = p_ij / τ for j ≠ i, so the negatives' gradient is split in
    proportion to p_ij; dropping the positive and renormalising gives the shares.
    """
    logits = similarity / temperature
    logits.fill_diagonal_(-math.inf)
    return torch.softmax(logits, dim=1)


def effective_negatives(weights: torch.Tensor) -> float:
    """Mean over rows of exp(entropy): B − 1 for uniform weights, 1 for one negative."""
    return float(torch.special.entr(weights).sum(dim=1).exp().mean().item())


def temperature_series(similarity: torch.Tensor, ln_batch: float) -> list[Series]:
    """The loss, ln B and the effective negatives at each temperature of :data:`SWEEP`."""
    losses = [info_nce(similarity, point).item() for point in SWEEP]
    effective = [effective_negatives(negative_weights(similarity, point)) for point in SWEEP]
    taus = list(SWEEP)
    loss_axes = {"x_label": "temperature τ", "y_label": "loss (nats)"}
    return [
        Series(name="InfoNCE loss", kind="line", x=taus, y=losses, **loss_axes),
        Series(name="ln B", kind="line", x=taus, y=[ln_batch] * len(taus), **loss_axes),
        Series(
            name="effective negatives, exp(entropy)",
            kind="line",
            x=taus,
            y=effective,
            x_label="temperature τ",
            y_label="negatives",
        ),
    ]


def contrastive(params: ContrastiveParams, device: torch.device) -> Outcome:
    """InfoNCE, its gradient weights and a temperature sweep on one batch of unit pairs."""
    queries, docs = unit_pairs(params, device)
    batch, tau = params.batch, params.temperature
    similarity = queries @ docs.T
    off_diagonal = ~torch.eye(batch, dtype=torch.bool, device=device)
    cosines = similarity[off_diagonal]
    loss = info_nce(similarity, tau).item()
    weights = negative_weights(similarity, tau)
    probabilities = torch.softmax(similarity / tau, dim=1)
    own = torch.arange(batch, device=device)
    ln_batch = math.log(batch)
    outputs = {
        "loss": loss,
        "symmetric_loss": (loss + info_nce(similarity.T, tau).item()) / 2,
        "ln_batch": ln_batch,
        "excess": loss - ln_batch,
        "loss_floor": math.log1p((batch - 1) * math.exp(-2 / tau)),
        "cosine_std": cosines.std().item(),
        "logit_std": cosines.std().item() / tau,
        "positive_cosine": similarity.diagonal().mean().item(),
        "positive_prob": probabilities.diagonal().mean().item(),
        "top1_accuracy": (similarity.argmax(dim=1) == own).double().mean().item(),
        "top_negative_share": weights.max(dim=1).values.mean().item(),
        "effective_negatives": effective_negatives(weights),
        "negatives": float(batch - 1),
    }
    sigma = 1 / (tau * math.sqrt(params.dim))
    theory = {
        "ln_batch": ln_batch,
        "negatives": float(batch - 1),
        "cosine_std": 1 / math.sqrt(params.dim),
        "logit_std": sigma,
    }
    gaussian = batch >= 64 and params.dim >= 16 and sigma <= MAX_THEORY_SIGMA
    if params.alignment == 0 and gaussian:
        # Logits ~ N(0, σ²): E[logsumexp] ≈ ln B + σ²/2, and the entropy of weights e^x
        # over N negatives ≈ ln N + σ²/2 − σ² (E[x e^x] / E[e^x] = σ²).
        theory.update(
            loss=ln_batch + sigma**2 / 2,
            symmetric_loss=ln_batch + sigma**2 / 2,
            excess=sigma**2 / 2,
            effective_negatives=(batch - 1) * math.exp(-(sigma**2) / 2),
        )
    series = temperature_series(similarity, ln_batch)
    notes = [
        f"ln B = {ln_batch:.4f} for B = {batch:,}: the loss when every logit is equal.",
        f"Random cosines have standard deviation 1/√d = {1 / math.sqrt(params.dim):.4f}; "
        f"divided by τ = {tau:g} they become logits of standard deviation {sigma:.3f}.",
    ]
    return Outcome(outputs=outputs, theory=theory, series=series, notes=notes)


# --- matryoshka ----------------------------------------------------------------------


def spectrum(dim: int, decay: float) -> torch.Tensor:
    """Per-dimension variance k^−α for k = 1 … d, fp64."""
    return torch.arange(1, dim + 1, dtype=torch.float64) ** -decay


def generated(
    params: MatryoshkaParams, generator: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Unit-norm query and document embeddings with the front-loaded spectrum, fp64."""
    scale = spectrum(params.dim, params.decay).sqrt().to(device)
    vectors = torch.randn(
        params.queries + params.docs,
        params.dim,
        generator=generator,
        device=device,
        dtype=torch.float64,
    )
    vectors = F.normalize(vectors * scale, dim=1)
    return vectors[: params.queries], vectors[params.queries :]


def random_rotation(dim: int, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """A uniformly random orthogonal matrix: QR of a Gaussian, column signs fixed by R."""
    gaussian = torch.randn(dim, dim, generator=generator, device=device, dtype=torch.float64)
    q, r = torch.linalg.qr(gaussian)
    rotation: torch.Tensor = q * torch.sign(torch.diagonal(r))
    return rotation


def principal_axes(docs: torch.Tensor) -> torch.Tensor:
    """The documents' principal axes as columns, largest variance first."""
    centred = docs - docs.mean(dim=0)
    _, vectors = torch.linalg.eigh(centred.T @ centred)
    axes: torch.Tensor = vectors.flip(dims=[1])
    return axes


def neighbours(queries: torch.Tensor, docs: torch.Tensor, k: int) -> torch.Tensor:
    """Indices of each query's k highest-scoring documents by dot product."""
    top: torch.Tensor = torch.topk(queries @ docs.T, k, dim=1).indices
    return top


def truncated(vectors: torch.Tensor, m: int, renormalise: bool = True) -> torch.Tensor:
    """The first m dimensions, re-normalised to unit length unless told not to."""
    head = vectors[:, :m]
    return F.normalize(head, dim=1) if renormalise else head


def recall_at_k(found: torch.Tensor, exact: torch.Tensor, docs: int) -> float:
    """Mean over queries of the share of the exact top k that the search found.

    Marks each query's exact neighbours in a queries × docs mask, then reads the
    mask at the found indices: O(queries · k) rather than comparing k × k pairs.
    """
    relevant = torch.zeros(exact.shape[0], docs, dtype=torch.bool, device=exact.device)
    relevant.scatter_(1, exact, True)
    return relevant.gather(1, found).double().mean().item()


def dims_series(dim: int, m: int) -> list[int]:
    """Powers of two up to d, plus m and d: the widths the series reports."""
    widths = {2**i for i in range(dim.bit_length()) if 2**i <= dim} | {m, dim}
    return sorted(widths)


def matryoshka(params: MatryoshkaParams, device: torch.device) -> Outcome:
    """recall@k of truncated search for front-loaded, rotated and PCA-rotated embeddings."""
    generator = seeded(device, params.seed)
    queries, docs = generated(params, generator, device)
    exact = neighbours(queries, docs, params.k)
    rotation = random_rotation(params.dim, generator, device)
    rotated_queries, rotated_docs = queries @ rotation, docs @ rotation
    axes = principal_axes(rotated_docs)
    pca_queries, pca_docs = rotated_queries @ axes, rotated_docs @ axes
    bases = {
        "front-loaded": (queries, docs),
        "rotated": (rotated_queries, rotated_docs),
        "rotated, then PCA": (pca_queries, pca_docs),
    }

    def recall(name: str, m: int, renormalise: bool = True) -> float:
        query_side, doc_side = bases[name]
        found = neighbours(
            truncated(query_side, m, renormalise), truncated(doc_side, m, renormalise), params.k
        )
        return recall_at_k(found, exact, params.docs)

    m, dim = params.truncate, params.dim
    widths = dims_series(dim, m)
    curves = {name: [recall(name, width) for width in widths] for name in bases}
    at_m = widths.index(m)
    variance = spectrum(dim, params.decay)
    outputs = {
        "recall_front_loaded": curves["front-loaded"][at_m],
        "recall_front_loaded_dot": recall("front-loaded", m, renormalise=False),
        "recall_rotated": curves["rotated"][at_m],
        "recall_pca": curves["rotated, then PCA"][at_m],
        "energy_front_loaded": docs[:, :m].square().sum(dim=1).mean().item(),
        "energy_rotated": rotated_docs[:, :m].square().sum(dim=1).mean().item(),
        "compression": dim / m,
    }
    # A uniformly random rotation leaves a unit vector's squared norm spread evenly over
    # the coordinates in expectation: m/d in the first m, whatever the spectrum.
    theory = {"energy_rotated": m / dim, "compression": dim / m}
    if m == dim:
        theory.update(
            recall_front_loaded=1.0,
            recall_front_loaded_dot=1.0,
            recall_rotated=1.0,
            recall_pca=1.0,
        )
    series = [
        Series(
            name=name,
            kind="line",
            x=[float(width) for width in widths],
            y=curve,
            x_label="dimensions kept m",
            y_label=f"recall@{params.k}",
        )
        for name, curve in curves.items()
    ]
    kept = (variance[:m].sum() / variance.sum()).item()
    notes = [
        "Generated embeddings, not a trained model's: the spectrum k^−α stands in for the "
        "front-loading Matryoshka training produces.",
        f"The first m = {m} of d = {dim} dimensions carry {kept:.1%} of the spectrum's "
        "variance before normalising.",
    ]
    return Outcome(outputs=outputs, theory=theory, series=series, notes=notes)


# --- the demos -----------------------------------------------------------------------

CONTRASTIVE = Demo(spec=spec.CONTRASTIVE, compute=contrastive)
MATRYOSHKA = Demo(spec=spec.MATRYOSHKA, compute=matryoshka)

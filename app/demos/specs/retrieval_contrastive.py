"""``contrastive`` and ``matryoshka``: how embedding models are trained and truncated.

``contrastive`` measures InfoNCE with in-batch negatives on random unit vectors
(its value at initialisation, ln B, and what the temperature does to it and to
the negatives' gradient weights); ``matryoshka`` measures recall@k of
nearest-neighbour search on the first m dimensions of generated embeddings.
Parameters and descriptions are shared by the web server (forms, card checks)
and the worker (validation); the computation is in
``app/worker/demos/retrieval_contrastive.py``. No torch here.
"""

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from app.demos.params import DemoParams, Seed
from app.demos.spec import DemoSpec

MAX_SIMILARITY_MACS = 2**29
"""Cap on batch² × dim, the multiply-adds of the B × B similarity matrix (fp64)."""

MAX_SCORES = 2**21
"""Cap on queries × docs: one fp64 score matrix, 16 MiB."""

MAX_SEARCH_MACS = 2**26
"""Cap on queries × docs × dim: the exact search; the truncated ones add about 6 times it."""

MAX_CORPUS = 2**21
"""Cap on docs × dim: the rotation and the PCA covariance cost docs × dim² multiply-adds."""


def _too_big(product: int, limit: int, formula: str, name: str, fit: int) -> PydanticCustomError:
    return PydanticCustomError(
        "budget",
        # Pydantic's message templates take no format specs: the numbers arrive formatted.
        "{formula} must be at most {limit} to keep one request under 2 s, got {product}: "
        "lower {name} to {fit} or less",
        {
            "formula": formula,
            "limit": f"{limit:,}",
            "product": f"{product:,}",
            "name": name,
            "fit": fit,
        },
    )


class ContrastiveParams(DemoParams):
    batch: int = Field(
        256,
        ge=2,
        le=1024,
        title="Batch size B",
        description="Query–document pairs; each query's B − 1 other documents are its "
        "in-batch negatives.",
    )
    dim: int = Field(
        128,
        ge=2,
        le=1024,
        title="Dimensions d",
        description=f"Embedding width; batch² × dim may be at most {MAX_SIMILARITY_MACS:,}.",
    )
    temperature: float = Field(
        0.07,
        ge=0.01,
        le=10.0,
        title="Temperature τ",
        description="Similarities are divided by τ before the softmax (CLIP starts at 0.07).",
    )
    alignment: float = Field(
        0.0,
        ge=0.0,
        le=0.99,
        title="Positive alignment",
        description="Cosine each document is drawn to have with its own query: 0 is a "
        "model at initialisation, larger values a model part-way through training.",
    )
    seed: Seed = 0

    @field_validator("dim")
    @classmethod
    def _within_budget(cls, dim: int, info: ValidationInfo) -> int:
        batch = info.data.get("batch")
        if batch is not None and batch * batch * dim > MAX_SIMILARITY_MACS:
            raise _too_big(
                batch * batch * dim,
                MAX_SIMILARITY_MACS,
                "batch² × dim",
                "dim",
                MAX_SIMILARITY_MACS // (batch * batch),
            )
        return dim


class MatryoshkaParams(DemoParams):
    docs: int = Field(
        2000,
        ge=100,
        le=20_000,
        title="Documents",
        description=f"Embeddings searched; docs × dim may be at most {MAX_CORPUS:,}.",
    )
    queries: int = Field(
        100,
        ge=10,
        le=1000,
        title="Queries",
        description=f"Queries searched; queries × docs may be at most {MAX_SCORES:,} and "
        f"queries × docs × dim at most {MAX_SEARCH_MACS:,}.",
    )
    dim: int = Field(256, ge=8, le=512, title="Dimensions d", description="Full embedding width.")
    truncate: int = Field(
        32,
        ge=1,
        le=512,
        title="Kept dimensions m",
        description="Dimensions the truncated search keeps (the first m); at most d.",
    )
    decay: float = Field(
        1.0,
        ge=0.0,
        le=3.0,
        title="Spectrum decay α",
        description="Variance of dimension k is k^−α before normalising: 0 spreads it "
        "evenly (isotropic), larger values front-load it.",
    )
    k: int = Field(10, ge=1, le=100, title="Neighbours k", description="Depth of recall@k.")
    seed: Seed = 0

    @field_validator("queries")
    @classmethod
    def _scores_fit(cls, queries: int, info: ValidationInfo) -> int:
        docs = info.data.get("docs")
        if docs is not None and queries * docs > MAX_SCORES:
            raise _too_big(
                queries * docs, MAX_SCORES, "queries × docs", "queries", MAX_SCORES // docs
            )
        return queries

    @field_validator("dim")
    @classmethod
    def _search_fits(cls, dim: int, info: ValidationInfo) -> int:
        docs, queries = info.data.get("docs"), info.data.get("queries")
        if docs is None:
            return dim
        # The dim to suggest must pass both caps, whichever of them failed.
        fit = MAX_CORPUS // docs
        if queries is not None:
            fit = min(fit, MAX_SEARCH_MACS // (queries * docs))
        if docs * dim > MAX_CORPUS:
            raise _too_big(docs * dim, MAX_CORPUS, "docs × dim", "dim", fit)
        if queries is not None and queries * docs * dim > MAX_SEARCH_MACS:
            raise _too_big(
                queries * docs * dim, MAX_SEARCH_MACS, "queries × docs × dim", "dim", fit
            )
        return dim

    @field_validator("truncate")
    @classmethod
    def _at_most_dim(cls, truncate: int, info: ValidationInfo) -> int:
        dim = info.data.get("dim")
        if dim is not None and truncate > dim:
            raise PydanticCustomError(
                "truncate",
                "the kept dimensions m ({truncate}) cannot exceed the embedding width d ({dim}): "
                "lower truncate to {dim} or less",
                {"truncate": truncate, "dim": dim},
            )
        return truncate


CONTRASTIVE = DemoSpec(
    name="contrastive",
    version=1,
    title="InfoNCE with in-batch negatives: ln B at initialisation, and temperature",
    description="Cross-entropy over the B × B similarity matrix of unit-norm query and "
    "document embeddings divided by τ: ln B at initialisation when τ is large enough, and "
    "how a small τ puts the gradient on the hardest negatives.",
    params=ContrastiveParams,
    outputs={
        "loss": "InfoNCE: F.cross_entropy of the similarity matrix / τ, each query's own "
        "document the target, mean over the B queries, in nats.",
        "symmetric_loss": "The mean of the query→document and document→query losses (CLIP's "
        "symmetric form).",
        "ln_batch": "ln B: the loss of a uniform softmax over the batch.",
        "excess": "loss − ln B.",
        "loss_floor": "ln(1 + (B − 1) e^(−2/τ)): the lowest loss a cosine in [−1, 1] allows "
        "(positive at 1, every negative at −1).",
        "cosine_std": "Standard deviation of the negatives' cosine similarities.",
        "logit_std": "Standard deviation of the negatives' logits, cosine / τ.",
        "positive_cosine": "Mean cosine of each query with its own document.",
        "positive_prob": "Mean softmax probability of the right document.",
        "top1_accuracy": "Share of queries whose own document scores highest.",
        "top_negative_share": "Mean over queries of the hardest negative's share of the "
        "negatives' gradient weight (their softmax probabilities).",
        "effective_negatives": "Mean over queries of exp(entropy) of the negatives' softmax: "
        "how many negatives effectively get gradient (B − 1 when uniform).",
        "negatives": "B − 1: the in-batch negatives of each query.",
    },
    worst_cases=(
        {"batch": 1024, "dim": 512},
        {"batch": 1024, "dim": 512, "temperature": 0.01, "alignment": 0.99},
    ),
)


MATRYOSHKA = DemoSpec(
    name="matryoshka",
    version=1,
    title="Matryoshka truncation: recall@k on the first m dimensions",
    description="Nearest-neighbour search on the first m of d dimensions against exact "
    "full-dimension neighbours, for embeddings whose variance is front-loaded (as "
    "Matryoshka training makes it), the same embeddings randomly rotated (spread evenly), "
    "and those rotated back by PCA.",
    params=MatryoshkaParams,
    outputs={
        "recall_front_loaded": "recall@k of cosine search on the first m dimensions, "
        "re-normalised, for the front-loaded embeddings.",
        "recall_front_loaded_dot": "The same without re-normalising: dot products of the "
        "truncated vectors.",
        "recall_rotated": "recall@k on the first m dimensions of the same embeddings after a "
        "random rotation (the full-dimension neighbours do not change).",
        "recall_pca": "recall@k on the top m principal components of the rotated embeddings "
        "(PCA fitted on the documents).",
        "energy_front_loaded": "Mean share of a unit vector's squared norm in its first m "
        "dimensions, front-loaded embeddings.",
        "energy_rotated": "The same after the random rotation.",
        "compression": "d / m: how many times smaller the truncated index is.",
    },
    worst_cases=(
        {"docs": 20_000, "queries": 100, "dim": 32, "truncate": 32, "k": 100},
        {"docs": 4096, "queries": 64, "dim": 256, "truncate": 256, "k": 100},
        {"docs": 2048, "queries": 1000, "dim": 32, "truncate": 32, "k": 100},
        {"docs": 4096, "queries": 32, "dim": 512, "truncate": 512, "k": 100},
    ),
)

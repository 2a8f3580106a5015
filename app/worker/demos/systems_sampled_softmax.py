"""``sampled_softmax``: sampled softmax with and without the logQ correction, against the full one.

The catalogue holds V items ranked by popularity, Q(i) ∝ i^−a (Zipf), the
distribution negatives are drawn from: in-batch negatives are other examples'
positives, so they follow popularity. One user's target distribution is
p(i) ∝ Q(i)·exp(σ z_i) with z_i ~ N(0, 1): popular items are likelier, tilted by
taste. The scoring model has two weights, s_i = β·log Q(i) + γ·z_i, so it can
represent p exactly (β = 1, γ = σ); the question is which weights each loss
picks. (A per-item logit table would leave the rarely sampled tail items to
SGD noise; two shared weights are what a feature-based item tower is, in
miniature.)

Three losses, each the expectation over the positive y ~ p (exact, a sum
weighted by p) and a Monte Carlo average over negative sets:

- full softmax: the cross-entropy of softmax(s) against p;
- sampled softmax (Jean et al. 2015 §3; ``tf.nn.sampled_softmax_loss``): the
  softmax over the positive and K negatives drawn from Q with replacement,
  −log(e^{s_y} / (e^{s_y} + Σ_k e^{s_k}));
- the same with the logQ correction: log Q is subtracted from every logit,
  the positive's and the negatives' (Yi et al. 2019, the corrected batch
  softmax; TensorFlow's ``subtract_log_q``).

With accidental hits removed (TensorFlow's default), a negative equal to the
positive is dropped from that positive's softmax. As K grows, Σ_k e^{s_k} ≈
K·Σ_i Q(i)e^{s_i}, so the uncorrected loss tends to a full softmax over
log Q + s: its optimum is s = log p − log Q + const, which here is β = 0 —
popular items lose exactly log Q. Subtracting log Q removes that term. (Exact
with accidental hits kept; removing them also takes the positive's own share
out of the sampled sum, a small bias that does not shrink with K.)

The sampled losses are averaged over 32 negative sets drawn once (a
sample-average approximation of their expectation over negatives), and each
fit is the minimum of its loss, found by L-BFGS: all three losses are convex
in the two weights. On the same negatives the corrected loss at (β, γ) is the
uncorrected one at (β − 1, γ), so the two fits differ by exactly 1 in β: the
correction moves log Q and nothing else, and what remains in the corrected
fit is the finite-K bias.
"""

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import torch
import torch.nn.functional as F

from app.demos.specs import systems_sampled_softmax as spec
from app.demos.specs.systems_sampled_softmax import METHODS, SampledSoftmaxParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------

NEGATIVE_SETS = 32
"""Negative sets of K each that the sampled losses average over (a sample-average approximation
of their expectation)."""

MAX_ITERATIONS = 100
"""L-BFGS iterations per fit: the losses are convex in the two weights and converge in far fewer."""

ERROR_BINS = 20
"""Groups of items, by popularity rank spaced evenly in log rank, in the error series."""

# --- the catalogue -------------------------------------------------------------------


@dataclass(frozen=True)
class Catalogue:
    """Popularity, taste and target, in fp64; items are in popularity order (rank 1 first)."""

    log_q: torch.Tensor  # log Q(i), the sampling distribution
    taste: torch.Tensor  # z_i
    log_p: torch.Tensor  # log p(i), the target

    @property
    def features(self) -> torch.Tensor:
        """(V, 2): log Q and z, the inputs of the two-weight scoring model."""
        return torch.stack([self.log_q, self.taste], dim=1)


def catalogue(
    params: SampledSoftmaxParams, generator: torch.Generator, device: torch.device
) -> Catalogue:
    """Zipf popularity, N(0, 1) taste scores and p ∝ Q·exp(σ z), normalised in log space."""
    ranks = torch.arange(1, params.items + 1, dtype=torch.float64, device=device)
    log_q = torch.log_softmax(-params.zipf_exponent * ranks.log(), dim=0)
    taste = torch.randn(params.items, generator=generator, dtype=torch.float64, device=device)
    log_p = torch.log_softmax(log_q + params.taste_std * taste, dim=0)
    return Catalogue(log_q, taste, log_p)


# --- the losses ----------------------------------------------------------------------


def full_softmax_loss(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of softmax(logits) against the target distribution p."""
    return F.cross_entropy(logits.unsqueeze(0), p.unsqueeze(0))


def sampled_softmax_loss(
    logits: torch.Tensor,
    p: torch.Tensor,
    negatives: torch.Tensor,
    *,
    log_q: torch.Tensor | None,
    hits: torch.Tensor | None,
) -> torch.Tensor:
    """Sampled softmax loss, expected over the positive y ~ p, mean over the negative sets.

    ``negatives`` is (sets, K) item ids. For a positive y the loss is
    −u_y + log(e^{u_y} + N_y) = softplus(log N_y − u_y), where u = logits − log Q
    (corrected) or the logits, and N_y = Σ_k e^{u_{s_k}} over the negatives, less
    the copies of y when accidental hits are removed (``hits``: (sets, V) counts
    of each item among each set's negatives, from :func:`hit_counts`; None keeps
    them). Computed for every y at once, so the expectation over y is exact.
    """
    shifted = logits if log_q is None else logits - log_q
    top = shifted.max().detach()  # any constant: it cancels between u_y and N_y
    weights = (shifted - top).exp()
    total = weights[negatives].sum(dim=1, keepdim=True)  # (sets, 1)
    if hits is not None:
        total = total - hits * weights
    # N_y is 0 when every negative is a hit: that positive's loss is 0 (softplus(−inf)).
    log_total = total.clamp(min=torch.finfo(weights.dtype).tiny).log()
    per_positive = F.softplus(log_total - (shifted - top))
    return (per_positive * p).sum(dim=1).mean()


def hit_counts(negatives: torch.Tensor, items: int) -> torch.Tensor:
    """(sets, V): how many times each item is among each set's negatives, in fp64."""
    sets = negatives.shape[0]
    offsets = torch.arange(sets, device=negatives.device).unsqueeze(1) * items
    counts = torch.bincount((negatives + offsets).flatten(), minlength=sets * items)
    return counts.view(sets, items).to(torch.float64)


# --- fitting -------------------------------------------------------------------------


def draw_negatives(q: torch.Tensor, negatives: int, generator: torch.Generator) -> torch.Tensor:
    """(NEGATIVE_SETS, K) item ids drawn from Q with replacement."""
    drawn = torch.multinomial(q, NEGATIVE_SETS * negatives, replacement=True, generator=generator)
    return drawn.view(NEGATIVE_SETS, negatives)


def objective(
    method: str, data: Catalogue, drawn: torch.Tensor, remove_accidental_hits: bool
) -> Callable[[torch.Tensor], torch.Tensor]:
    """The loss one method minimises, as a function of the weights (β, γ)."""
    features, p = data.features, data.log_p.exp()
    hits = hit_counts(drawn, p.numel()) if remove_accidental_hits else None

    def loss(weights: torch.Tensor) -> torch.Tensor:
        logits = features @ weights
        if method == "full":
            return full_softmax_loss(logits, p)
        return sampled_softmax_loss(
            logits,
            p,
            drawn,
            log_q=data.log_q if method == "corrected" else None,
            hits=hits,
        )

    return loss


def minimise(loss: Callable[[torch.Tensor], torch.Tensor], device: torch.device) -> torch.Tensor:
    """The weights at the minimum of ``loss`` (convex in them), by L-BFGS from 0."""
    weights = torch.zeros(2, dtype=torch.float64, device=device, requires_grad=True)
    optimiser = torch.optim.LBFGS(
        [weights],
        lr=1.0,
        max_iter=MAX_ITERATIONS,
        tolerance_grad=1e-10,
        tolerance_change=1e-14,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        value = loss(weights)
        torch.autograd.backward(value)
        return value

    with torch.enable_grad():
        optimiser.step(closure)  # type: ignore[no-untyped-call]
    return weights.detach()


# --- measurements --------------------------------------------------------------------


def weighted_slope_and_correlation(
    y: torch.Tensor, x: torch.Tensor, weights: torch.Tensor
) -> tuple[float, float]:
    """Least-squares slope of y on x and their correlation, both weighted by ``weights``."""
    w = weights / weights.sum()
    dx, dy = x - (w * x).sum(), y - (w * y).sum()
    covariance = (w * dx * dy).sum()
    var_x, var_y = (w * dx * dx).sum(), (w * dy * dy).sum()
    slope = (covariance / var_x).item()
    correlation = (covariance / (var_x * var_y).sqrt()).item() if var_y > 0 else 0.0
    return slope, correlation


def kl(log_p: torch.Tensor, log_model: torch.Tensor) -> float:
    """KL(p ‖ model) in nats."""
    return F.kl_div(log_model, log_p, reduction="sum", log_target=True).item()


def top_k_overlap(reference: torch.Tensor, other: torch.Tensor, k: int) -> float:
    """Share of the reference's k highest items that are among the other's k highest."""
    first = set(torch.topk(reference, k).indices.tolist())
    second = set(torch.topk(other, k).indices.tolist())
    return len(first & second) / k


def error_series(data: Catalogue, errors: dict[str, torch.Tensor]) -> list[Series]:
    """Mean log-probability error per popularity group, against the group's mean log Q."""
    items = data.log_q.numel()
    edges = sorted({round(items ** (i / ERROR_BINS)) for i in range(ERROR_BINS + 1)} | {0})
    groups = list(pairwise(edges))  # a sorted set: every group holds an item at least
    x = [data.log_q[low:high].mean().item() for low, high in groups]
    return [
        Series(
            name=method,
            kind="line",
            x=x,
            y=[error[low:high].mean().item() for low, high in groups],
            x_label="log Q (popularity group)",
            y_label="learned − true log-probability",
        )
        for method, error in errors.items()
    ]


# --- compute -------------------------------------------------------------------------


def compute(params: SampledSoftmaxParams, device: torch.device) -> Outcome:
    """Fit the three losses on one catalogue and compare what each learned with p."""
    generator = seeded(device, params.seed)
    with torch.inference_mode(False):  # autograd saves these tensors: make them outside it
        data = catalogue(params, generator, device)
        drawn = draw_negatives(data.log_q.exp(), params.negatives, generator)
        learned = {
            method: minimise(objective(method, data, drawn, params.remove_accidental_hits), device)
            for method in METHODS
        }
    features, log_p, p = data.features, data.log_p, data.log_p.exp()
    log_model = {m: torch.log_softmax(features @ w, dim=0) for m, w in learned.items()}
    errors = {m: log_model[m] - log_p for m in METHODS}
    limit = torch.log_softmax(log_p - data.log_q, dim=0)
    k = params.top_k
    outputs: dict[str, float] = {}
    for method, (beta, gamma) in learned.items():
        outputs[f"popularity_weight_{method}"] = beta.item()
        outputs[f"taste_weight_{method}"] = gamma.item()
        outputs[f"kl_{method}"] = kl(log_p, log_model[method])
    outputs["kl_uncorrected_limit"] = kl(log_p, limit)
    for method in ("uncorrected", "corrected"):
        slope, correlation = weighted_slope_and_correlation(errors[method], data.log_q, p)
        outputs[f"bias_slope_{method}"] = slope
        if method == "uncorrected":
            outputs["bias_correlation_uncorrected"] = correlation
        outputs[f"recall_at_k_{method}"] = top_k_overlap(log_model["full"], log_model[method], k)
        head = log_model[method][:k].exp().sum() / p[:k].sum()
        outputs[f"head_share_{method}"] = head.item()
    theory = {
        "popularity_weight_full": 1.0,
        "popularity_weight_uncorrected": 0.0,
        "popularity_weight_corrected": 1.0,
        "taste_weight_full": params.taste_std,
        "taste_weight_uncorrected": params.taste_std,
        "taste_weight_corrected": params.taste_std,
        "kl_full": 0.0,
        "kl_uncorrected": outputs["kl_uncorrected_limit"],
        "kl_corrected": 0.0,
        "bias_slope_uncorrected": -1.0,
        "bias_slope_corrected": 0.0,
        "head_share_uncorrected": (limit[:k].exp().sum() / p[:k].sum()).item(),
        "head_share_corrected": 1.0,
    }
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=error_series(data, errors),
        notes=NOTES,
    )


NOTES = [
    "Model: s_i = β·log Q(i) + γ·z_i, which matches p exactly at β = 1, γ = σ. Negatives are "
    "drawn from Q with replacement, 32 sets of K, shared by the two sampled losses; each fit is "
    "the L-BFGS minimum of its loss averaged over them (the positive's expectation is exact).",
    "Theory: the large-K limits. Without correction the sampled loss tends to a full softmax "
    "over s + log Q, so the fit learns log p − log Q (β = 0); with log Q subtracted from every "
    "logit it tends to the full softmax itself (β = 1). Removing accidental hits shifts both "
    "limits a little; at small K both keep a further bias that shrinks with K.",
    "The positive's logit is corrected too, as in TensorFlow's subtract_log_q and Yi et al.'s "
    "corrected batch softmax.",
]


# --- the demo ------------------------------------------------------------------------

SAMPLED_SOFTMAX = Demo(spec=spec.SAMPLED_SOFTMAX, compute=compute)

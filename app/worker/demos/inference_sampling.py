"""``sampling_filters``: temperature, top-k, top-p (nucleus) and min-p on one logit vector.

No model can be downloaded here, so the next-token logits are synthetic, and
say so: z_r = −s·ln(r) for the token of rank r = 1…V, so that softmax(z) falls
as r^−s (Zipf-like), plus seeded Gaussian noise of standard deviation σ.

Each filter follows the semantics of the logits warpers in Hugging Face
transformers (``src/transformers/generation/logits_process.py``):

- temperature divides the logits by τ (``TemperatureLogitsWarper``);
- top-k keeps every logit at least the k-th largest, so a tie at the k-th keeps
  more than k, with k raised to ``min_tokens_to_keep`` and capped at V
  (``TopKLogitsWarper``);
- top-p sorts ascending, and removes the tokens whose cumulative probability is
  at most 1 − top_p, never the last ``min_tokens_to_keep``: what is left is the
  smallest set of most likely tokens whose mass is at least top_p
  (``TopPLogitsWarper``);
- min-p removes tokens whose probability is below min_p × the top token's
  probability, except the ``min_tokens_to_keep`` most likely
  (``MinPLogitsWarper``).

``generate`` chains them as temperature → top-k → top-p → min-p
(``_get_logits_processor`` in ``generation/utils.py``: temperature only when
τ ≠ 1, top-k only when k ≠ 0, top-p only when top_p < 1), each filter seeing
the previous one's output with removed tokens at −inf. Min-p therefore acts
on the probabilities after temperature. All arithmetic is fp64 (transformers
usually runs these in the model's fp32 scores, which can move a token that
sits exactly on a threshold).
"""

import math

import torch

from app.demos.specs import inference_sampling as spec
from app.demos.specs.inference_sampling import SamplingParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

SWEEP_TEMPERATURES = (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)


# --- the synthetic logits -----------------------------------------------------------------------


def draw_logits(params: SamplingParams, device: torch.device) -> torch.Tensor:
    """Zipf-shaped logits −s·ln(rank) plus N(0, σ²) noise, fp64, one row of ``vocab``."""
    rank = torch.arange(1, params.vocab + 1, dtype=torch.float64, device=device)
    logits = -params.exponent * rank.log()
    if params.noise > 0:
        generator = seeded(device, params.seed)
        noise = torch.randn(params.vocab, generator=generator, dtype=torch.float64, device=device)
        logits = logits + params.noise * noise
    return logits


# --- the filters: which tokens each keeps -------------------------------------------------------


def top_k_keep(scores: torch.Tensor, top_k: int, min_keep: int = 1) -> torch.Tensor:
    """Tokens ``TopKLogitsWarper(top_k, min_tokens_to_keep=min_keep)`` leaves, as a mask.

    Example:
        >>> top_k_keep(torch.tensor([3.0, 1.0, 2.0, 2.0]), 2).tolist()  # a tie at the 2nd
        [True, False, True, True]
    """
    k = min(max(top_k, min_keep), scores.shape[-1])
    kth = torch.topk(scores, k).values[..., -1:]
    return scores >= kth


def top_p_keep(scores: torch.Tensor, top_p: float, min_keep: int = 1) -> torch.Tensor:
    """Tokens ``TopPLogitsWarper(top_p, min_tokens_to_keep=min_keep)`` leaves, as a mask.

    Example:
        >>> probs = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64)
        >>> top_p_keep(probs.log(), 0.75).tolist()  # 0.5 + 0.3 reaches 0.75
        [True, True, False, False]
    """
    # stable for reproducibility; transformers' sort is not, which can only change which of
    # several tied tokens is dropped, never how many or the mass they hold.
    ascending, order = torch.sort(scores, descending=False, stable=True)
    cumulative = ascending.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative <= 1 - top_p
    remove[..., -min_keep:] = False
    return ~remove.scatter(-1, order, remove)


def min_p_keep(scores: torch.Tensor, min_p: float, min_keep: int = 1) -> torch.Tensor:
    """Tokens ``MinPLogitsWarper(min_p, min_tokens_to_keep=min_keep)`` leaves, as a mask.

    Example:
        >>> probs = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64)
        >>> min_p_keep(probs.log(), 0.2).tolist()  # threshold 0.2 × 0.5 = 0.1
        [True, True, True, False]
    """
    probs = scores.softmax(dim=-1)
    keep = probs >= min_p * probs.amax(dim=-1, keepdim=True)
    top = torch.topk(probs, min(min_keep, probs.shape[-1]), dim=-1).indices
    return keep.scatter(-1, top, True)


def chain_keep(scores: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Tokens left after top-k → top-p → min-p on tempered ``scores``, as ``generate`` runs them.

    Each filter sees the previous one's output with removed tokens at −inf, so
    top-p measures its mass on the distribution top-k left, renormalised.
    """
    masked = scores
    if params.top_k != 0:
        masked = masked.masked_fill(
            ~top_k_keep(masked, params.top_k, params.min_tokens_to_keep), -math.inf
        )
    if params.top_p < 1.0:
        masked = masked.masked_fill(
            ~top_p_keep(masked, params.top_p, params.min_tokens_to_keep), -math.inf
        )
    masked = masked.masked_fill(
        ~min_p_keep(masked, params.min_p, params.min_tokens_to_keep), -math.inf
    )
    return masked.isfinite()


# --- what a mask keeps --------------------------------------------------------------------------


def entropy(scores: torch.Tensor, keep: torch.Tensor | None = None) -> float:
    """Entropy in nats of softmax(scores) restricted to ``keep`` and renormalised."""
    if keep is not None:
        scores = scores.masked_fill(~keep, -math.inf)
    return float(torch.special.entr(scores.softmax(dim=-1)).sum().item())


def _summary(
    name: str, kept: str, probs: torch.Tensor, scores: torch.Tensor, keep: torch.Tensor
) -> dict[str, float]:
    """Tokens kept, the mass they hold before renormalising, and the entropy after it."""
    return {
        kept: float(keep.sum().item()),
        f"{name}_mass": probs[keep].sum().item(),
        f"{name}_entropy": entropy(scores, keep),
    }


def _filter_off(params: SamplingParams, scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """top_k 0 and top_p 1 keep every token: transformers does not add those warpers."""
    all_tokens = torch.ones_like(scores, dtype=torch.bool)
    top_k = (
        all_tokens
        if params.top_k == 0
        else top_k_keep(scores, params.top_k, params.min_tokens_to_keep)
    )
    top_p = (
        all_tokens
        if params.top_p >= 1.0
        else top_p_keep(scores, params.top_p, params.min_tokens_to_keep)
    )
    return top_k, top_p


# --- computation --------------------------------------------------------------------------------


def compute(params: SamplingParams, device: torch.device) -> Outcome:
    """Apply each filter alone and the chain to one tempered logit vector."""
    logits = draw_logits(params, device)
    scores = logits / params.temperature
    probs = scores.softmax(dim=-1)
    top_prob = probs.max().item()
    top_k, top_p = _filter_off(params, scores)
    min_p = min_p_keep(scores, params.min_p, params.min_tokens_to_keep)
    outputs = {
        "entropy": entropy(scores),
        "entropy_at_t1": entropy(logits),
        "top_prob": top_prob,
        **_summary("top_k", "top_k_kept", probs, scores, top_k),
        **_summary("nucleus", "nucleus_size", probs, scores, top_p),
        "min_p_threshold": params.min_p * top_prob,
        **_summary("min_p", "min_p_kept", probs, scores, min_p),
        **_summary("combined", "combined_kept", probs, scores, chain_keep(scores, params)),
    }
    nucleus, survivors = _sweep(logits, params)
    return Outcome(
        outputs=outputs,
        theory=_theory(params, logits),
        series=[
            Series(
                name=f"nucleus size at top_p {params.top_p:g}",
                kind="line",
                x=list(SWEEP_TEMPERATURES),
                y=nucleus,
                x_label="temperature τ",
                y_label="tokens kept",
            ),
            Series(
                name=f"min-p survivors at min_p {params.min_p:g}",
                kind="line",
                x=list(SWEEP_TEMPERATURES),
                y=survivors,
                x_label="temperature τ",
                y_label="tokens kept",
            ),
        ],
        notes=[
            "The logits are synthetic: −s·ln(rank) plus seeded Gaussian noise, not a model's.",
            "Filters follow transformers' TopKLogitsWarper, TopPLogitsWarper and "
            "MinPLogitsWarper; the chain runs temperature → top-k → top-p → min-p.",
        ],
    )


def _sweep(logits: torch.Tensor, params: SamplingParams) -> tuple[list[float], list[float]]:
    """Nucleus size and min-p survivors alone at each of SWEEP_TEMPERATURES.

    Dividing by τ > 0 keeps the order of the logits, so one ascending sort
    serves every temperature; the rules are top_p_keep's and min_p_keep's on
    that sorted row (the most likely tokens are its last entries).
    """
    ascending = torch.sort(logits).values
    keep_last = min(params.min_tokens_to_keep, params.vocab)
    nucleus, survivors = [], []
    for tau in SWEEP_TEMPERATURES:
        probs = (ascending / tau).softmax(dim=-1)
        remove = probs.cumsum(dim=-1) <= 1 - params.top_p
        remove[-keep_last:] = False
        kept = params.vocab - int(remove.sum().item()) if params.top_p < 1.0 else params.vocab
        nucleus.append(float(kept))
        keep = probs >= params.min_p * probs[-1]
        keep[-keep_last:] = True
        survivors.append(float(keep.sum().item()))
    return nucleus, survivors


def _theory(params: SamplingParams, logits: torch.Tensor) -> dict[str, float]:
    """Closed forms for the filters alone.

    Top-k keeps min(max(k, min_keep), V) tokens when no two logits tie; min-p
    keeps p ≥ min_p·p_max, that is z ≥ z_max − τ·ln(1/min_p) in logits.
    """
    theory: dict[str, float] = {}
    distinct = params.exponent > 0 or params.noise > 0
    if params.top_k != 0 and distinct:
        theory["top_k_kept"] = float(
            min(max(params.top_k, params.min_tokens_to_keep), params.vocab)
        )
    if params.min_p > 0:
        gap = params.temperature * math.log(1 / params.min_p)
        survivors = int((logits >= logits.max() - gap).sum().item())
        theory["min_p_kept"] = float(max(survivors, min(params.min_tokens_to_keep, params.vocab)))
    return theory


# --- the demo -----------------------------------------------------------------------------------

SAMPLING_FILTERS = Demo(spec=spec.SAMPLING_FILTERS, compute=compute)

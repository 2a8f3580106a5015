"""``perplexity``: perplexity = exp(cross-entropy), and the same loss in bits.

A toy language model: at each of ``tokens`` positions the true next-token
distribution is softmax(z) over ``vocab`` tokens, with logits z ~ N(0, σ²);
the target is drawn from it, and the model predicts softmax(z / τ). PyTorch's
``cross_entropy`` gives the mean negative log-likelihood in nats (natural log);
perplexity is its exponential, bits per token divide it by ln 2, and bits per
byte divide those by the bytes each token stands for (Gao et al. 2020, §3.1:
BPB = (L_T / L_B)·ℓ / ln 2). The expected cross-entropy is
mean_t Σ_v p_tv·(−log q_tv), at least the entropy of p, with equality at τ = 1.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import evaluation_perplexity as spec
from app.demos.specs.evaluation_perplexity import PerplexityParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import row_chunks
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

LN2 = math.log(2.0)
SWEEP_TEMPERATURES = (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)


def compute(params: PerplexityParams, device: torch.device) -> Outcome:
    """Score sampled next tokens with F.cross_entropy and convert the loss."""
    generator = seeded(device, params.seed)
    losses, expected, entropy = [], [], []
    sweep = torch.zeros(len(SWEEP_TEMPERATURES), dtype=torch.float64)
    for start, stop in row_chunks(params.tokens, params.vocab):
        logits = params.logit_std * torch.randn(
            stop - start, params.vocab, generator=generator, dtype=torch.float64, device=device
        )
        log_p = torch.log_softmax(logits, dim=-1)
        p = log_p.exp()
        targets = torch.multinomial(p, 1, generator=generator).squeeze(-1)
        model_logits = logits / params.temperature
        losses.append(F.cross_entropy(model_logits, targets, reduction="none"))
        expected.append(-(p * torch.log_softmax(model_logits, dim=-1)).sum(-1))
        entropy.append(-(p * log_p).sum(-1))
        for index, tau in enumerate(SWEEP_TEMPERATURES):
            sweep[index] += -(p * torch.log_softmax(logits / tau, dim=-1)).sum().item()
    loss = torch.cat(losses)
    cross_entropy = loss.mean().item()  # what F.cross_entropy's default reduction="mean" gives
    expected_ce = torch.cat(expected).mean().item()
    mean_entropy = torch.cat(entropy).mean().item()
    chunk_means = torch.stack([part.mean() for part in loss.tensor_split(params.chunks)])

    bits = cross_entropy / LN2
    return Outcome(
        outputs={
            "cross_entropy": cross_entropy,
            "perplexity": math.exp(cross_entropy),
            "bits_per_token": bits,
            "bits_per_byte": bits * params.tokens_per_byte,
            "perplexity_from_bits": 2.0**bits,
            "entropy": mean_entropy,
            "kl_divergence": expected_ce - mean_entropy,
            "uniform_perplexity": float(params.vocab),
            "mean_chunk_perplexity": chunk_means.exp().mean().item(),
        },
        theory={
            "cross_entropy": expected_ce,
            "perplexity": math.exp(expected_ce),
            "bits_per_token": expected_ce / LN2,
            "bits_per_byte": expected_ce / LN2 * params.tokens_per_byte,
            "perplexity_from_bits": math.exp(expected_ce),
        },
        series=[
            Series(
                name="expected cross-entropy",
                kind="line",
                x=list(SWEEP_TEMPERATURES),
                y=(sweep / params.tokens).tolist(),
                x_label="model temperature τ",
                y_label="nats per token",
            ),
            Series(
                name="entropy of the data (the floor)",
                kind="line",
                x=list(SWEEP_TEMPERATURES),
                y=[mean_entropy] * len(SWEEP_TEMPERATURES),
                x_label="model temperature τ",
                y_label="nats per token",
            ),
        ],
        notes=[
            "Theory is the expected cross-entropy mean_t Σ_v p·(−log q) over the same "
            "positions; the measurement scores one sampled token per position.",
            "mean_chunk_perplexity averages exp(loss) over chunks: by Jensen's inequality it is "
            "at least exp(mean loss), so it is not the perplexity of the whole text.",
        ],
    )


# --- the demo -----------------------------------------------------------------------------------

PERPLEXITY = Demo(spec=spec.PERPLEXITY, compute=compute)

"""``init_loss``: the cross-entropy of a freshly initialised LM head, against ln V.

A model that knows nothing should spread its probability evenly over the V
tokens of its vocabulary; the cross-entropy of the uniform distribution is
−ln(1/V) = ln V, whatever the target. A real head is not exactly uniform at
initialisation: its logits z = W h are Gaussian with variance σ² (for an
RMS-normalised h of width d and weights of standard deviation s, σ² = d s²),
and the expected loss is E[logsumexp(z)] − E[z_target] ≈ ln V + σ²/2 for large
V (E[e^z] = e^{σ²/2}). So a head initialised too large starts above ln V.

The measured model: token embedding (N(0, 1)), RMSNorm without weight, and a
bias-free output head initialised as chosen; random input and target tokens.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import training_init_loss as spec
from app.demos.specs.training_init_loss import InitLossParams
from app.worker.demo import Demo, Outcome
from app.worker.demos._common import histogram
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------

LOGIT_CHUNK = 2**21
"""Logits made at once (8 MiB in fp32): rows of a few thousand elements would leave the
matrix multiply too small to run at speed, so this is larger than _common's chunk."""


# --- compute -------------------------------------------------------------------------


def logit_variance(params: InitLossParams) -> float:
    """σ² of one logit for a unit-RMS hidden state: d · Var(w).

    nn.Linear's default init is U(−1/√d, 1/√d) (kaiming_uniform_ with a = √5),
    whose variance is 1/(3d), so σ² = 1/3 whatever d.

    Example:
        >>> logit_variance(InitLossParams(vocab=8192, d_model=768, init_std=0.02))
        0.3072
    """
    weight_variance = {
        "normal": params.init_std**2,
        "torch_default": 1 / (3 * params.d_model),
        "zeros": 0.0,
    }[params.init]
    return round(params.d_model * weight_variance, 12)


def compute(params: InitLossParams, device: torch.device) -> Outcome:
    """Score random tokens with a freshly initialised embedding → RMSNorm → head (fp32).

    The logits are made a chunk of rows at a time, so memory stays flat in the
    number of tokens.
    """
    generator = seeded(device, params.seed)
    d, vocab = params.d_model, params.vocab
    head = torch.empty(vocab, d, device=device)
    if params.init == "normal":
        head.normal_(0.0, params.init_std, generator=generator)
    elif params.init == "torch_default":
        bound = 1 / math.sqrt(d)
        head.uniform_(-bound, bound, generator=generator)
    else:
        head.zero_()
    inputs = torch.randint(vocab, (params.tokens,), generator=generator, device=device)
    targets = torch.randint(vocab, (params.tokens,), generator=generator, device=device)
    # Embedding rows are N(0, 1); only the rows looked up are drawn.
    rows, positions = torch.unique(inputs, return_inverse=True)
    table = torch.randn(len(rows), d, generator=generator, device=device)
    hidden = F.rms_norm(table[positions], (d,))
    sampled, expected, sums, squares = [], [], 0.0, 0.0
    step = max(1, LOGIT_CHUNK // vocab)
    buffer = torch.empty(min(step, params.tokens), vocab, device=device)
    for start in range(0, params.tokens, step):
        stop = min(params.tokens, start + step)
        logits = torch.matmul(hidden[start:stop], head.T, out=buffer[: stop - start])
        mean_logits = logits.mean(dim=-1)
        sums += logits.sum().item()
        squares += torch.linalg.vector_norm(logits).item() ** 2
        # The loss itself, from the library: F.cross_entropy against the sampled targets.
        sampled.append(F.cross_entropy(logits, targets[start:stop], reduction="none"))
        # Cross-entropy is logsumexp(z) − z_target; averaged over all V targets, − mean(z).
        expected.append(torch.logsumexp(logits, dim=-1) - mean_logits)
    per_token = torch.cat(sampled)
    loss, expected_loss = per_token.mean().item(), torch.cat(expected).mean().item()
    count = params.tokens * vocab
    measured_std = math.sqrt(max(0.0, squares / count - (sums / count) ** 2))
    ln_vocab = math.log(vocab)
    variance = logit_variance(params)
    outputs = {
        "loss": loss,
        "expected_loss": expected_loss,
        "ln_vocab": ln_vocab,
        "excess": expected_loss - ln_vocab,
        "logit_std": measured_std,
        "perplexity": math.exp(expected_loss),
    }
    theory = {"ln_vocab": ln_vocab, "logit_std": math.sqrt(variance)}
    # ln V + σ²/2 is E[log Σ e^z] to leading order; the next term, −(e^{σ²} − 1)/(2V),
    # stays under 1% of ln V for V ≥ 1000 and σ ≤ 2, so the theory is given there only.
    if vocab >= 1000 and variance <= 4:
        expected_theory = ln_vocab + variance / 2
        theory.update(
            loss=expected_theory,
            expected_loss=expected_theory,
            excess=variance / 2,
            perplexity=vocab * math.exp(variance / 2),
        )
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=histogram(per_token, name="per-token loss", x_label="cross-entropy (nats)"),
        notes=[f"ln V = {ln_vocab:.4f} for V = {vocab:,}: the loss of a uniform prediction."],
    )


# --- the demo ------------------------------------------------------------------------

INIT_LOSS = Demo(spec=spec.INIT_LOSS, compute=compute)

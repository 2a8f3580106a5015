"""``loss_scaling``: which gradients fp16 flushes to zero, with and without a loss scale.

The gradients are real: an fp32 cross-entropy over ``tokens`` rows of random
logits (standard deviation ``logit_std``) is divided by ``mean_over``, the
number of tokens the training loss averages over, and back-propagated; the
gradient of the logits is then cast to fp16 and to bf16, as it is where an
fp32 loss meets a half-precision LM head. For a non-target token that gradient
is p_i / mean_over with p_i ≈ 1/V, so a 32k vocabulary and a 4,096-token mean
put it near 7.6e-9, below fp16's smallest subnormal 2⁻²⁴ ≈ 6.0e-8.

fp16 (torch.finfo): largest 65504, smallest normal 2⁻¹⁴, smallest subnormal
2⁻²⁴; under round-to-nearest-even a magnitude at or below 2⁻²⁵ becomes 0 and
one at or above 65520 becomes inf. bf16 keeps fp32's 8 exponent bits: largest
about 3.39e38, smallest normal 2⁻¹²⁶, but 8 significant bits to fp16's 11.
Multiplying the loss by S (what torch.amp.GradScaler does, S = 2¹⁶ at the
start) multiplies every gradient by S, lifting small ones above the cut-off;
the optimizer divides by S again in fp32.
"""

import math

import torch
import torch.nn.functional as F

from app.demos.specs import training_precision as spec
from app.demos.specs.training_precision import LossScalingParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ----------------------------------------------------------------------


# --- compute -------------------------------------------------------------------------

FP16, BF16 = torch.finfo(torch.float16), torch.finfo(torch.bfloat16)
FP16_SMALLEST_SUBNORMAL = FP16.smallest_normal * FP16.eps  # 2**-24
BF16_SMALLEST_SUBNORMAL = BF16.smallest_normal * BF16.eps  # 2**-133
FP16_ZERO_BELOW = FP16_SMALLEST_SUBNORMAL / 2  # 2**-25: rounds to 0 (a tie goes to even, 0)
FP16_INF_FROM = FP16.max + 2.0 ** (15 - 10 - 1)  # 65520: halfway to the next power of two


def logit_gradients(
    params: LossScalingParams, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The fp32 gradient of the logits, unscaled and with the loss scaled by S (two backward
    passes), and the target of each row."""
    generator = seeded(device, params.seed)
    shape = (params.tokens, params.vocab)
    grads = []
    with torch.inference_mode(False), torch.enable_grad():
        # Made here, not under the worker's inference mode, so autograd may use them.
        values = torch.randn(shape, generator=generator, device=device) * params.logit_std
        targets = torch.randint(params.vocab, (params.tokens,), generator=generator, device=device)
        for scale in (1.0, params.loss_scale):
            logits = values.clone().requires_grad_()
            loss = F.cross_entropy(logits, targets, reduction="sum") / params.mean_over
            torch.autograd.backward(loss * scale)
            assert logits.grad is not None
            grads.append(logits.grad.detach())
    return grads[0], grads[1], targets


def predicted_zero_share(params: LossScalingParams, scale: float) -> float:
    """Share of all logit gradients that fp16 flushes to zero, for Gaussian logits, large V.

    A non-target gradient is p_i / mean_over with p_i = e^{z_i} / Σ e^z and
    Σ e^z ≈ V e^{σ²/2}, so it is at most 2⁻²⁵ / S when
    z_i ≤ ln(2⁻²⁵ · mean_over · V e^{σ²/2} / S): a normal probability. The
    target's gradient, (p_t − 1) / mean_over ≈ −1 / mean_over, is 1 in V.

    Example:
        >>> params = LossScalingParams(logit_std=0.0)
        >>> predicted_zero_share(params, 1.0), predicted_zero_share(params, 65536.0)
        (0.99996875, 0.0)
    """
    sigma = params.logit_std
    cut = math.log(FP16_ZERO_BELOW * params.mean_over * params.vocab / scale) + sigma**2 / 2
    if sigma == 0:
        non_target = 1.0 if cut >= 0 else 0.0
    else:
        non_target = 0.5 * math.erfc(-cut / (sigma * math.sqrt(2)))
    target = 1.0 if scale / params.mean_over <= FP16_ZERO_BELOW else 0.0
    return ((params.vocab - 1) * non_target + target) / params.vocab


def compute(params: LossScalingParams, device: torch.device) -> Outcome:
    """Cast real fp32 logit gradients to fp16 and bf16 and count what is lost."""
    unscaled, scaled, targets = logit_gradients(params, device)
    nonzero = unscaled != 0
    count = max(1, int(nonzero.sum().item()))

    def share(mask: torch.Tensor) -> float:
        return (mask & nonzero).sum().item() / count

    fp16, fp16_scaled = unscaled.to(torch.float16), scaled.to(torch.float16)
    bf16 = unscaled.to(torch.bfloat16)
    non_target = torch.ones_like(nonzero)
    non_target[torch.arange(params.tokens, device=device), targets] = False
    magnitudes = unscaled.abs()
    outputs = {
        "fp16_zero_share": share(fp16 == 0),
        "fp16_zero_share_scaled": share(fp16_scaled == 0),
        "fp16_subnormal_share": share((fp16 != 0) & (fp16.abs() < FP16.smallest_normal)),
        "fp16_subnormal_share_scaled": share(
            (fp16_scaled != 0) & (fp16_scaled.abs() < FP16.smallest_normal)
        ),
        "fp16_inf_share_scaled": share(torch.isinf(fp16_scaled)),
        "bf16_zero_share": share(bf16 == 0),
        "median_gradient": magnitudes[non_target].median().item() if params.vocab > 1 else 0.0,
        "largest_gradient_scaled": scaled.abs().max().item(),
        "fp16_max": FP16.max,
        "fp16_smallest_normal": FP16.smallest_normal,
        "fp16_smallest_subnormal": FP16_SMALLEST_SUBNORMAL,
        "fp16_eps": FP16.eps,
        "bf16_max": BF16.max,
        "bf16_smallest_normal": BF16.smallest_normal,
        "bf16_eps": BF16.eps,
    }
    theory = {
        "fp16_max": 65504.0,
        "fp16_smallest_normal": 2.0**-14,
        "fp16_smallest_subnormal": 2.0**-24,
        "fp16_eps": 2.0**-10,
        "bf16_smallest_normal": 2.0**-126,
        "bf16_eps": 2.0**-7,
    }
    # The Gaussian-logit model needs many logits per row and a moderate spread
    # (Σ e^z ≈ V e^{σ²/2}); outside that no theory is given.
    if params.vocab >= 1000 and params.logit_std <= 2:
        theory["fp16_zero_share"] = predicted_zero_share(params, 1.0)
        theory["fp16_zero_share_scaled"] = predicted_zero_share(params, params.loss_scale)
        theory["median_gradient"] = 1 / (
            params.vocab * math.exp(params.logit_std**2 / 2) * params.mean_over
        )
    exponents = torch.log2(magnitudes[nonzero]).clamp(min=-160.0)
    scaled_exponents = torch.log2(scaled.abs()[nonzero]).clamp(min=-160.0)
    return Outcome(
        outputs=outputs,
        theory=theory,
        series=[
            _log2_histogram(exponents, "unscaled"),
            _log2_histogram(scaled_exponents, f"× S = {params.loss_scale:g}"),
        ],
        notes=[
            "fp16 flushes magnitudes ≤ 2^-25 to 0 and rounds ≥ 65520 to inf; below 2^-14 it "
            "keeps subnormals with fewer significant bits.",
            "Theory shares come from Gaussian logits alone (V ≥ 1000, logit std ≤ 2).",
        ],
    )


def _log2_histogram(exponents: torch.Tensor, name: str) -> Series:
    """Counts of log₂|gradient| in unit-wide bins."""
    low, high = math.floor(exponents.min().item()), math.ceil(exponents.max().item()) + 1
    counts = torch.histc(exponents, bins=high - low, min=low, max=high)
    return Series(
        name=name,
        kind="histogram",
        x=[low + i + 0.5 for i in range(high - low)],
        y=counts.tolist(),
        x_label="log2 |gradient| (fp16 flushes ≤ -25 to zero)",
        y_label="count",
    )


# --- the demo ------------------------------------------------------------------------

LOSS_SCALING = Demo(spec=spec.LOSS_SCALING, compute=compute)

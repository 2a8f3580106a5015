"""``calibration``: ECE of an over-confident classifier, before and after temperature scaling.

The simulation: every input has true logits z ~ N(0, σ²) over K classes and its
label is drawn from softmax(z); the model reports c·z (c = ``overconfidence``),
so it ranks the classes right but its probabilities are too sharp for c > 1.
The first half of the inputs is the validation set, the second the test set.

Temperature scaling (Guo et al. 2017, §4.2) divides the logits by one T > 0
fitted by minimising the validation NLL; here with ``torch.optim.LBFGS`` on
log T, as gpleiss/temperature_scaling fits T with L-BFGS. Since z/T keeps the
order of the logits, the predictions and the accuracy cannot change. T = c
gives back softmax(z), the true distribution, which minimises the expected
NLL: the fit should land near c.

ECE is Guo et al.'s eq. (3): the top-label confidences fall into M bins
((m − 1)/M, m/M], and ECE = Σ |B_m|/n · |acc(B_m) − conf(B_m)|. Its theory here
is the same sum with each prediction's true chance of being right, the true
probability of the predicted class, in place of its 0/1 outcome: what the bins
would show without label noise.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from app.demos.specs import evaluation_calibration as spec
from app.demos.specs.evaluation_calibration import CalibrationParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.device import seeded

# --- parameters ---------------------------------------------------------------------------------


# --- computation --------------------------------------------------------------------------------

NLL_CURVE_POINTS = 9


@dataclass(frozen=True)
class Split:
    """The model's logits, the labels and the true class probabilities of one half."""

    logits: torch.Tensor
    labels: torch.Tensor
    true_probs: torch.Tensor


@dataclass(frozen=True)
class Reliability:
    """Guo et al.'s binned calibration measures for one set of predictions."""

    ece: float
    counts: torch.Tensor
    accuracy: torch.Tensor
    confidence: torch.Tensor


def simulate(params: CalibrationParams, device: torch.device) -> tuple[Split, Split]:
    """Validation and test halves: labels drawn from softmax(z), model logits c·z."""
    generator = seeded(device, params.seed)
    shape = (params.samples, params.classes)
    true_logits = torch.randn(shape, generator=generator, dtype=torch.float64, device=device)
    true_logits *= params.logit_std
    true_probs = true_logits.softmax(-1)
    labels = torch.multinomial(true_probs, 1, generator=generator).squeeze(-1)
    logits = true_logits.mul_(params.overconfidence)  # the model: same ranking, scaled logits
    half = params.samples // 2
    return (
        Split(logits[:half], labels[:half], true_probs[:half]),
        Split(logits[half:], labels[half:], true_probs[half:]),
    )


def reliability(confidence: torch.Tensor, correct: torch.Tensor, bins: int) -> Reliability:
    """ECE (Guo et al. eq. 3) and the per-bin accuracy and mean confidence.

    ``correct`` may be 0/1 outcomes or chances of being right. Bin m holds the
    confidences in ((m − 1)/M, m/M]; empty bins get accuracy and confidence 0
    and no weight.

    Example:
        >>> conf = torch.tensor([0.55, 0.65, 0.95, 0.95], dtype=torch.float64)
        >>> hit = torch.tensor([1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
        >>> round(reliability(conf, hit, 2).ece, 4)   # (0.5, 1]: |0.75 - 0.775|
        0.025
    """
    edges = torch.arange(1, bins, dtype=torch.float64, device=confidence.device) / bins
    index = torch.bucketize(confidence, edges)  # edges[i-1] < x <= edges[i]
    counts = torch.bincount(index, minlength=bins).double()
    hits = torch.bincount(index, weights=correct.double(), minlength=bins)
    confidences = torch.bincount(index, weights=confidence.double(), minlength=bins)
    ece = (hits - confidences).abs().sum().item() / confidence.numel()
    shown = counts.clamp(min=1)
    return Reliability(ece, counts, hits / shown, confidences / shown)


def fit_temperature(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """The T > 0 minimising F.cross_entropy(logits / T, labels), by L-BFGS on log T from T = 1."""
    with torch.inference_mode(False), torch.enable_grad():
        # Cloned here, outside the worker's inference mode, so autograd may save them.
        values, targets = logits.clone(), labels.clone()
        log_t = torch.zeros(1, dtype=torch.float64, device=logits.device, requires_grad=True)
        optimizer = torch.optim.LBFGS(
            [log_t],
            lr=1.0,
            max_iter=100,
            tolerance_grad=1e-10,
            tolerance_change=1e-14,
            line_search_fn="strong_wolfe",
        )

        def closure() -> torch.Tensor:
            optimizer.zero_grad()
            loss = F.cross_entropy(values / log_t.exp(), targets)
            torch.autograd.backward(loss)
            return loss

        optimizer.step(closure)  # type: ignore[no-untyped-call]
        return math.exp(log_t.item())


def expected_nll(logits: torch.Tensor, true_probs: torch.Tensor) -> float:
    """Mean over inputs of Σ_k p_k · (−log q_k): the NLL's expectation over the labels."""
    return -(true_probs * logits.log_softmax(-1)).sum(-1).mean().item()


@dataclass(frozen=True)
class Scores:
    """One set of test logits divided by a temperature, measured and without label noise."""

    predicted: torch.Tensor
    confidences: torch.Tensor
    measured: Reliability
    noise_free: Reliability
    nll: float
    expected_nll: float
    accuracy: float
    expected_accuracy: float


def score(split: Split, temperature: float, bins: int) -> Scores:
    """Top-label confidence, ECE, NLL and accuracy of ``split``'s logits / ``temperature``."""
    logits = split.logits / temperature
    confidences, predicted = logits.softmax(-1).max(-1)
    correct = (predicted == split.labels).double()
    chance = split.true_probs.gather(-1, predicted.unsqueeze(-1)).squeeze(-1)
    return Scores(
        predicted=predicted,
        confidences=confidences,
        measured=reliability(confidences, correct, bins),
        noise_free=reliability(confidences, chance, bins),
        nll=F.cross_entropy(logits, split.labels).item(),
        expected_nll=expected_nll(logits, split.true_probs),
        accuracy=correct.mean().item(),
        expected_accuracy=chance.mean().item(),
    )


def compute(params: CalibrationParams, device: torch.device) -> Outcome:
    """Simulate, fit T on the validation half, score the test half before and after."""
    validation, test = simulate(params, device)
    temperature = fit_temperature(validation.logits, validation.labels)
    before, after = score(test, 1.0, params.bins), score(test, temperature, params.bins)
    true_probs = test.true_probs
    entropy = -(true_probs * true_probs.clamp(min=1e-300).log()).sum(-1).mean().item()
    outputs = {
        "temperature": temperature,
        "ece_before": before.measured.ece,
        "ece_after": after.measured.ece,
        "nll_before": before.nll,
        "nll_after": after.nll,
        "accuracy_before": before.accuracy,
        "accuracy_after": after.accuracy,
        "confidence_before": before.confidences.mean().item(),
        "confidence_after": after.confidences.mean().item(),
        "predictions_changed": float((before.predicted != after.predicted).sum().item()),
        "entropy": entropy,
        "validation_nll_at_one": F.cross_entropy(validation.logits, validation.labels).item(),
        "validation_nll_fitted": F.cross_entropy(
            validation.logits / temperature, validation.labels
        ).item(),
    }
    return Outcome(
        outputs=outputs,
        theory={
            "temperature": params.overconfidence,
            "ece_before": before.noise_free.ece,
            "ece_after": after.noise_free.ece,
            "nll_before": before.expected_nll,
            "nll_after": after.expected_nll,
            "accuracy_before": before.expected_accuracy,
            "accuracy_after": after.expected_accuracy,
            "predictions_changed": 0.0,
        },
        series=[
            *_reliability_series(before.measured, after.measured),
            *_confidence_histograms(before, after, params.bins),
            _validation_curve(validation, temperature),
        ],
        notes=NOTES,
    )


NOTES = [
    "T is fitted on the validation half only; every other score is on the test half.",
    "Theory for ECE: the same bins with each prediction's true chance of being right in place "
    "of its 0/1 outcome. The measured ECE sits above it: label noise in each bin's accuracy "
    "adds error that the absolute value does not cancel, more so with many bins or few samples.",
    "Theory for T: the over-confidence factor c, since c·z / c gives back the true logits.",
]


def _reliability_series(before: Reliability, after: Reliability) -> list[Series]:
    """Accuracy against mean confidence in each non-empty bin, and the diagonal."""
    series = []
    for name, r in (("before scaling", before), ("after scaling", after)):
        shown = r.counts > 0
        series.append(
            Series(
                name=name,
                kind="line",
                x=r.confidence[shown].tolist(),
                y=r.accuracy[shown].tolist(),
                x_label="mean confidence in the bin",
                y_label="accuracy in the bin",
            )
        )
    series.append(
        Series(
            name="perfectly calibrated",
            kind="line",
            x=[0.0, 1.0],
            y=[0.0, 1.0],
            x_label="mean confidence in the bin",
            y_label="accuracy in the bin",
        )
    )
    return series


def _confidence_histograms(before: Scores, after: Scores, bins: int) -> list[Series]:
    """Test predictions per confidence bin, before and after scaling."""
    centres = [(m + 0.5) / bins for m in range(bins)]
    return [
        Series(
            name=f"predictions {name}",
            kind="histogram",
            x=centres,
            y=scores.measured.counts.tolist(),
            x_label="top-label confidence",
            y_label="count",
        )
        for name, scores in (("before scaling", before), ("after scaling", after))
    ]


def _validation_curve(validation: Split, temperature: float) -> Series:
    """Validation NLL against T, on a geometric grid spanning T = 1 and the fitted T."""
    low, high = min(1.0, temperature) / 2, max(1.0, temperature) * 2
    grid = torch.logspace(
        math.log10(low), math.log10(high), NLL_CURVE_POINTS, dtype=torch.float64
    ).tolist()
    return Series(
        name="validation NLL",
        kind="line",
        x=grid,
        y=[F.cross_entropy(validation.logits / t, validation.labels).item() for t in grid],
        x_label="temperature T",
        y_label="validation NLL (nats)",
    )


# --- the demo -----------------------------------------------------------------------------------

CALIBRATION = Demo(spec=spec.CALIBRATION, compute=compute)

"""``base_rate_ppv``: the positive predictive value of a test depends on the base rate.

Each simulated person has the condition with probability π (the prevalence);
a test is positive with probability sens for them and 1 − spec for the others.
By Bayes' rule the share of positives who have the condition is

    PPV = sens·π / (sens·π + (1 − spec)(1 − π))
    NPV = spec(1 − π) / (spec(1 − π) + (1 − sens)π)

and two tests whose errors are independent given the true state give, among
those positive on both, π·sens² / (π·sens² + (1 − π)(1 − spec)²): the odds
form, prior odds × (sens / (1 − spec))². The demo counts the four cells of the
confusion matrix over the population and compares.
"""

import torch

from app.demos.specs import classical_base_rate_ppv as spec
from app.demos.specs.classical_base_rate_ppv import BaseRatePpvParams
from app.worker.demo import Demo, Outcome, Series
from app.worker.demos._common import CHUNK_ELEMENTS
from app.worker.device import seeded

SWEEP_PREVALENCES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


def ppv(sensitivity: float, specificity: float, prevalence: float, tests: int = 1) -> float:
    """P(condition | positive on ``tests`` independent tests), by Bayes' rule.

    Example:
        >>> round(ppv(0.9, 0.95, 0.01), 4)
        0.1538
        >>> round(ppv(0.9, 0.95, 0.01, tests=2), 3)
        0.766
    """
    hit = prevalence * sensitivity**tests
    return hit / (hit + (1 - prevalence) * (1 - specificity) ** tests)


def npv(sensitivity: float, specificity: float, prevalence: float) -> float:
    """P(no condition | negative), by Bayes' rule.

    Example:
        >>> round(npv(0.9, 0.95, 0.01), 4)
        0.9989
    """
    correct = (1 - prevalence) * specificity
    return correct / (correct + prevalence * (1 - sensitivity))


def simulate(params: BaseRatePpvParams, device: torch.device) -> dict[str, int]:
    """Counts over the population, drawn a chunk of people at a time.

    Returns ``tp``, ``fp``, ``tn``, ``fn`` for the first test, ``both`` (positive
    on two independent tests) and ``both_sick`` (of those, with the condition).
    """
    generator = seeded(device, params.seed)
    counts = dict.fromkeys(("tp", "fp", "tn", "fn", "both", "both_sick"), 0)
    for start in range(0, params.population, CHUNK_ELEMENTS):
        size = min(CHUNK_ELEMENTS, params.population - start)
        draws = torch.rand(3, size, generator=generator, dtype=torch.float64, device=device)
        sick = draws[0] < params.prevalence
        first, second = (
            torch.where(sick, u < params.sensitivity, u >= params.specificity) for u in draws[1:]
        )
        both = first & second
        counts["tp"] += int((sick & first).sum())
        counts["fp"] += int((~sick & first).sum())
        counts["fn"] += int((sick & ~first).sum())
        counts["tn"] += int((~sick & ~first).sum())
        counts["both"] += int(both.sum())
        counts["both_sick"] += int((both & sick).sum())
    return counts


def compute(params: BaseRatePpvParams, device: torch.device) -> Outcome:
    """Simulate the population, count the confusion matrix, compare with Bayes' rule."""
    c = simulate(params, device)
    n, pi = params.population, params.prevalence
    sens, spec_ = params.sensitivity, params.specificity
    sick, healthy = c["tp"] + c["fn"], c["fp"] + c["tn"]
    outputs = {
        "true_positives": float(c["tp"]),
        "false_positives": float(c["fp"]),
        "true_negatives": float(c["tn"]),
        "false_negatives": float(c["fn"]),
        "positives": float(c["tp"] + c["fp"]),
        "with_condition": float(sick),
    }
    # Ratios with an empty denominator (no positive, say) have no value: left out.
    for name, top, bottom in (
        ("ppv", c["tp"], c["tp"] + c["fp"]),
        ("npv", c["tn"], c["tn"] + c["fn"]),
        ("ppv_two_positives", c["both_sick"], c["both"]),
        ("false_per_true_positive", c["fp"], c["tp"]),
    ):
        if bottom > 0:
            outputs[name] = top / bottom
    if sick > 0 and healthy > 0 and c["fp"] > 0:
        outputs["likelihood_ratio"] = (c["tp"] / sick) / (c["fp"] / healthy)
    theory = {
        "ppv": ppv(sens, spec_, pi),
        "npv": npv(sens, spec_, pi),
        "ppv_two_positives": ppv(sens, spec_, pi, tests=2),
        "true_positives": n * pi * sens,
        "false_positives": n * (1 - pi) * (1 - spec_),
        "true_negatives": n * (1 - pi) * spec_,
        "false_negatives": n * pi * (1 - sens),
        "positives": n * (pi * sens + (1 - pi) * (1 - spec_)),
        "with_condition": n * pi,
    }
    if spec_ < 1:
        theory["false_per_true_positive"] = (1 - pi) * (1 - spec_) / (pi * sens)
        theory["likelihood_ratio"] = sens / (1 - spec_)
    return Outcome(
        outputs=outputs,
        theory={name: value for name, value in theory.items() if name in outputs},
        series=[_confusion(c), *_sweep(params, device)],
        notes=[
            "Theory uses the nominal prevalence; the simulation draws its own number of "
            "people with the condition, so its PPV scatters around Bayes' rule.",
            "The second test's errors are drawn independently of the first's given the true "
            "state: a retest that fails for the same reason is worth much less.",
        ],
    )


def _confusion(c: dict[str, int]) -> Series:
    return Series(
        name="confusion matrix",
        kind="bar",
        x=["true positives", "false positives", "false negatives", "true negatives"],
        y=[float(c["tp"]), float(c["fp"]), float(c["fn"]), float(c["tn"])],
        x_label="cell",
        y_label="people",
    )


def _sweep(params: BaseRatePpvParams, device: torch.device) -> list[Series]:
    """PPV and NPV against prevalence: Bayes' rule, and PPV from binomial draws of TP and FP."""
    generator = seeded(device, params.seed)
    sens, spec_, n = params.sensitivity, params.specificity, params.population
    x = list(SWEEP_PREVALENCES)
    sick = torch.tensor([float(round(n * pi)) for pi in x], dtype=torch.float64, device=device)
    rates = torch.tensor([sens, 1 - spec_], dtype=torch.float64, device=device)
    counts = torch.binomial(torch.stack([sick, n - sick], 1), rates.repeat(len(x), 1), generator)
    tp, positives = counts[:, 0].cpu(), counts.sum(1).cpu()
    kept = [i for i in range(len(x)) if positives[i] > 0]  # no positive: no PPV to show
    return [
        Series(
            name="PPV, Bayes' rule",
            kind="line",
            x=x,
            y=[ppv(sens, spec_, pi) for pi in x],
            x_label="prevalence",
            y_label="predictive value",
        ),
        Series(
            name="PPV, simulated",
            kind="line",
            x=[x[i] for i in kept],
            y=[float(tp[i] / positives[i]) for i in kept],
            x_label="prevalence",
            y_label="predictive value",
        ),
        Series(
            name="NPV, Bayes' rule",
            kind="line",
            x=x,
            y=[npv(sens, spec_, pi) for pi in x],
            x_label="prevalence",
            y_label="predictive value",
        ),
    ]


BASE_RATE_PPV = Demo(spec=spec.BASE_RATE_PPV, compute=compute)

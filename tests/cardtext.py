"""A complete, valid card as text, for tests to copy and break one thing at a time."""

GOOD_CARD = """\
---
id: test-scaling
title: The scaling factor
question: What do you divide $QK^\\top$ by, and why?
deck: testdeck
tags: [attention, softmax]
difficulty: medium
minutes: 4
sources:
  - "Vaswani et al. 2017, [arXiv:1706.03762](https://arxiv.org/abs/1706.03762)"
---

## Answer

Divide by $\\sqrt{d_k}$ so the scores keep unit variance.[^1]

## TL;DR

$\\sqrt{d_k}$, the per-head key dimension.

## Key points

- Divide by $\\sqrt{d_k}$, the per-head key dimension
- The dot product's variance grows with $d_k$
- Unscaled scores saturate the softmax

## Analogy

Averaging more dice.

## Deep dive

$$
\\operatorname{Var}(q \\cdot k) = d_k
$$

```python
scores = q @ k.T / d_k ** 0.5
```

| divisor | variance |
|---|---:|
| 1 | 128 |

## When it doesn't apply

Additive attention. See [the other card](card:test-other).

## Quick scan

State it, derive it.

## Side by side

| a | b |
|---|---|
| 1 | 2 |

## Real-world examples

Llama 3 70B.

## Follow-ups

### Why the square root? {#why-sqrt}

Because the standard deviation grows as the square root.

### What does FlashAttention do? {#flash}

It scales inside each block.

## Red flags

### Dividing by $\\sqrt{d_\\text{model}}$ {#sqrt-d-model}

The scale is per head.

### Saying it is tuned {#tuned}

It follows from the variance.

## Multiple choice

Which divisor keeps unit variance?

- [ ] $\\sqrt{d_\\text{model}}$ {flag=sqrt-d-model}
- [x] $\\sqrt{d_k}$
- [ ] a tuned constant {flag=tuned}

[^1]: Footnote 4 of the paper.
"""

OTHER_CARD = """\
---
id: test-other
title: Another card
question: What is softmax?
deck: testdeck
difficulty: easy
minutes: 2
---

## Answer

A normalised exponential.

## TL;DR

Exp, then normalise.

## Key points

- Exponentiate each score
- Divide by the sum, so the weights add up to 1
- Larger scores get exponentially more weight

## Follow-ups

### Why exp? {#why-exp}

Positive and smooth.

## Red flags

### Calling it a max {#max}

It is a soft version.
"""


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")

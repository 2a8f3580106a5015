"""``quizlab new``: a card file with every section, a fresh id, and placeholders.

Each placeholder contains the word the content check refuses (``TODO``), so a
scaffold fails the check, line by line, until every part is written.
"""

import re
from pathlib import Path

from app.content.card import PLACEHOLDER

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,59}$")

TEMPLATE = """\
---
id: {card_id}
title: {T} short title shown in lists
question: {T} the question, asked the way an interviewer asks it
deck: {deck}
tags: [{deck}]
difficulty: medium
minutes: 3
sources:
  - "{T} a source for every fact: paper (arXiv id, section), official config or docs"
---

## Answer

{T} what you would say out loud, in a few sentences.

## TL;DR

{T} one or two lines.

## Key points

- {T} a point an interviewer listens for, one short line
- {T} a second point
- {T} a third point (3 to 6 in all)

## Analogy

{T} an everyday picture of the idea.

## Deep dive

{T} intuition, a formula such as $\\sqrt{{d_k}}$, a short code block and a worked example.

{T} a number a demo can measure is bound to it, like this one (keep it, change it
or delete it): unscaled, the score variance is
{{live}}`score_variance.variance(d_k=128, divisor=none) = 128 ± 5%`.

## When it doesn't apply

{T} the settings where the answer changes, and why.

## Quick scan

{T} the 2-4 minute version.

## Side by side

| option | {T} what changes |
|---|---|
| {T} | {T} |

## Real-world examples

{T} models and systems that do this, with sources.

## Follow-ups

### {T} the question an interviewer asks next {{#follow-up-1}}

{T} the approach a strong candidate takes.

### {T} a second follow-up {{#follow-up-2}}

{T} its approach.

## Red flags

### {T} a mistake that sinks a candidate {{#red-flag-1}}

{T} why it is wrong, and what to say instead.

### {T} a second mistake {{#red-flag-2}}

{T} why it is wrong, and what to say instead.

### {T} a third mistake {{#red-flag-3}}

{T} why it is wrong, and what to say instead.

## Multiple choice

- [ ] {T} a wrong answer {{flag=red-flag-1}}
- [x] {T} the right answer (not always first: options are shown as written)
- [ ] {T} another wrong answer {{flag=red-flag-2}}
"""


class ScaffoldError(ValueError):
    """The deck or slug cannot be used; the message says why."""


def new_card(content_dir: Path, deck: str, slug: str, taken_ids: set[str]) -> Path:
    """Write ``content_dir/deck/slug.md`` and return its path.

    Raises:
        ScaffoldError: a bad name, or a file that already exists.
    """
    for what, value in (("deck", deck), ("slug", slug)):
        if not _NAME.match(value):
            raise ScaffoldError(f"{what} '{value}' must be lowercase letters, digits and '-'")
    path = content_dir / deck / f"{slug}.md"
    if path.exists():
        raise ScaffoldError(f"{path} already exists")
    card_id = f"{deck}-{slug}"
    suffix = 2
    while card_id in taken_ids:
        card_id = f"{deck}-{slug}-{suffix}"
        suffix += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEMPLATE.format(card_id=card_id, deck=deck, T=PLACEHOLDER))
    return path

"""Documentation that cannot fall behind the code."""

import re

from app.settings import PROJECT_ROOT, Settings
from app.worker.settings import WorkerSettings

README = (PROJECT_ROOT / "README.md").read_text()


def test_every_setting_is_in_the_readme() -> None:
    documented = set(re.findall(r"`(QUIZLAB_[A-Z_]+)`", README))
    missing = [f"QUIZLAB_{name.upper()}" for name in Settings.model_fields]
    missing += [f"QUIZLAB_WORKER_{name.upper()}" for name in WorkerSettings.model_fields]
    assert [name for name in missing if name not in documented] == []


def test_readme_gives_the_two_commands() -> None:
    blocks = re.findall(r"^    (\S.*)$", README, re.M)
    assert "make run" in blocks and "make test" in blocks


AUTHORING = (PROJECT_ROOT / "docs" / "authoring.md").read_text()
# Bad cards: one mistake each, on a card that is otherwise at the deck standard.
MISTAKES = [
    # Key points (tests/cardtext.py's GOOD_CARD has three)
    ("- Unscaled scores saturate the softmax\n", ""),
    (
        "- Unscaled scores saturate the softmax",
        "- Unscaled scores saturate the softmax" + " and more" * 20,
    ),
    (
        "- Unscaled scores saturate the softmax\n",
        "- Unscaled scores saturate the softmax\n\nA paragraph.\n",
    ),
    (
        "- Unscaled scores saturate the softmax",
        "- Unscaled scores saturate the softmax\n  - nested",
    ),
    ("---\nid:", "id:"),
    ("---\n\n## Answer", "\n## Answer"),
    ("title: The scaling factor", "title: Scaling: why\nx: y: z"),
    ("title: The scaling factor", "title: [unclosed"),
    ("minutes: 4\n", ""),
    ("tags:", "tag:"),
    ("tags:", "zzzzzz:"),
    ("id: test-scaling", "id: Test Scaling"),
    ("deck: testdeck", "deck: other"),
    ("difficulty: medium", "difficulty: brutal"),
    ("minutes: 4", "minutes: 400"),
    ("## Red flags", "## Redflags"),
    ("## Analogy", "## Metaphor"),
    ("## TL;DR\n\n$\\sqrt{d_k}$, the per-head key dimension.\n", ""),
    ("Averaging more dice.", ""),
    ("## Quick scan", "## Analogy"),
    ("## Analogy", "### Analogy"),
    ("### What does FlashAttention", "#### What does FlashAttention"),
    ("{#why-sqrt}", ""),
    ("{#why-sqrt}", "{#Why_Sqrt}"),
    ("{#flash}", "{#why-sqrt}"),
    ("It scales inside each block.", ""),
    ("It follows from the variance.", ""),
    ("- [x] $\\sqrt{d_k}$", "- [ ] $\\sqrt{d_k}$ {flag=tuned}"),
    ("- [x] $\\sqrt{d_k}$\n- [ ] a tuned constant {flag=tuned}\n", ""),
    ("- [x] $\\sqrt{d_k}$", "- $\\sqrt{d_k}$"),
    ("{flag=tuned}", ""),
    ("{flag=tuned}", "{flag=tunned}"),
    ("{flag=tuned}", "{flag=a tuned constant}"),
    ("- [x] $\\sqrt{d_k}$", "- [x] $\\sqrt{d_k}$ {flag=tuned}"),
    ("- [ ] a tuned constant {flag=tuned}\n", "- [ ] a tuned constant {flag=tuned}\n\nAfter.\n"),
    ("d_k ** 0.5\n```\n", "d_k ** 0.5\n"),
    ("Averaging more dice.", "Averaging $\\alpah$ dice."),
    ("Averaging more dice.", "Averaging $\\frobnicate$ dice."),
    ("Averaging more dice.", "Averaging $\\begin{aligne} a \\end{aligne}$ dice."),
    ("Averaging more dice.", "Averaging $a \\mathrel{=} b$ dice."),
    ("Averaging more dice.", "Averaging ${a$ dice."),
    ("Averaging more dice.", "Averaging $a}$ dice."),
    ("Averaging more dice.", "Averaging $\\frac{a}$ dice."),
    ("Averaging more dice.", "Averaging $d_k dice."),
    ("Averaging more dice.", 'Averaging {live}"a.b = 1" dice.'),
    ("Averaging more dice.", "Averaging dice.[^9]"),
    ("(card:test-other)", "(card:test-othre)"),
    ("Averaging more dice.", "Averaging TODO dice."),
    ("Averaging more dice.", "Averaging $x^$ dice."),
    ("id: test-scaling\n", "id: test-scaling\naliases: [Old Id]\n"),
    ("id: test-scaling\n", "id: test-scaling\naliases: [test-scaling]\n"),
    ("Averaging more dice.", "Averaging {live}`score_variance.varianse(d_k=8) = 8 ± 5%`."),
    ("Averaging more dice.", "Averaging {live}`score_variance.zzzzzz(d_k=8) = 8 ± 5%`."),
    ("Averaging more dice.", "Averaging {live}`score_varience.variance(d_k=8) = 8 ± 5%`."),
    ("Averaging more dice.", "Averaging {live}`score_variance.variance(dk=8) = 8 ± 5%`."),
    ("Averaging more dice.", "Averaging {live}`score_variance.variance(d_k=0) = 8 ± 5%`."),
    ("Averaging more dice.", "Averaging {live}`score_variance.variance(d_k=8) = 8`."),
    ("Averaging more dice.", "Averaging {live}`score_variance.variance`."),
    ("Averaging more dice.", "Averaging\n\n```demo score_variance\nd_k: 0\n```\n"),
    ("```python\n", "```python run\n"),
    ("d_k ** 0.5\n", "d_k ** 0.5\nprint(scores)\n"),
    ("Averaging more dice.", "Averaging $a & b$ dice."),
    ("{flag=tuned}", "{flag=zzzzzzzz}"),
    ("### Why the square root? {#why-sqrt}", "- Why the square root? {#why-sqrt}"),
    (
        "### Why the square root? {#why-sqrt}\n\nBecause the standard deviation grows as the "
        "square root.\n\n### What does FlashAttention do? {#flash}\n\nIt scales inside each block.",
        "Nothing yet.",
    ),
    ("Averaging more dice.", "Averaging $" + "x + " * 20 + "y$ dice."),
    ("{#why-sqrt}", "{#why-sqrt was=a b}"),
    ("{#why-sqrt}", "{#why-sqrt was=why-sqrt}"),
    ("{#heads}", "{#heads was=head-count}"),
    ("{#flash}", "{#flash was=why-sqrt}"),
    ("{#flash}", "{#flash was=gone}\n\nIt scales.\n\n### Another {#another was=gone}"),
    (
        "- [ ] a tuned constant {flag=tuned}\n",
        "- [ ] a tuned constant {flag=tuned}\n\n  Tuning is what people think.\n",
    ),
]


def _documented() -> list[re.Pattern[str]]:
    section = AUTHORING[AUTHORING.index("## Check messages") :]
    rows = re.findall(r"^\| `(.+?)` \|[^|]*\|$", section, re.M)
    messages = [m for row in rows for m in row.split("` / `")]
    return [
        re.compile(".+?".join(re.escape(part) for part in m.removeprefix("warning: ").split("…")))
        for m in messages
    ]


def test_every_check_message_is_in_the_authoring_table() -> None:
    from app.content.card import Problem
    from app.content.parse import parse_card
    from tests.cardtext import OTHER_CARD
    from tests.test_card_mistakes import STANDARD_CARD

    patterns = _documented()
    produced: list[Problem] = []
    for old, new in MISTAKES:
        assert old in STANDARD_CARD, old
        result = parse_card(STANDARD_CARD.replace(old, new, 1), "content/testdeck/scaling.md")
        produced += result.problems + result.warnings
    produced += parse_card(OTHER_CARD, "content/testdeck/other.md").warnings
    undocumented = {
        p.message for p in produced if not any(r.fullmatch(p.message) for r in patterns)
    }
    assert undocumented == set()
    unused = [r.pattern for r in patterns if not any(r.fullmatch(p.message) for p in produced)]
    # Messages no single card can produce: cross-file, from --run-code, or from the database.
    assert all(
        any(
            word in pattern
            for word in ("duplicate", "link\\ to", "code\\ block", "alias\\ '", "has\\ it\\ now")
        )
        for pattern in unused
    ), unused

"""Property-based: any text at all gives a card or check problems, never an exception."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.content.parse import parse_card
from tests.cardtext import GOOD_CARD

PATH = "content/testdeck/fuzz.md"

# Pieces that exercise the parser's own syntax, mixed with arbitrary text.
SYNTAX = st.sampled_from(
    [
        "---\n", "## Answer\n", "## TL;DR\n", "## Follow-ups\n", "## Red flags\n",
        "## Multiple choice\n", "### Q {#k}\n", "### Q {#K!}\n", "- [x] a\n", "- [ ] b {flag=k}\n",
        "$\\frac{a}{b}$", "$$\n\\sqrt{x\n$$\n", "{live}`score_variance.variance(d_k=8) = 8 ± 1`",
        "{live}`nope`", "```demo rope\nd: 64\n```\n", "```demo\n: :\n```\n", "[x](card:nope)",
        "[^1]", "[^1]: note\n", "<script>x</script>", "id: a\n", "title: [\n", "minutes: -1\n",
        "\n", "| a | b |\n|---|---|\n", "TODO", "\x00", "\ufeff", "#### sub\n",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(SYNTAX, st.text(max_size=40)), max_size=40))
def test_any_text_gives_a_card_or_problems(pieces: list[str]) -> None:
    result = parse_card("".join(pieces), PATH)
    assert (result.card is None) == bool(result.problems)
    for problem in result.problems:
        assert problem.path == PATH and problem.line >= 1 and problem.message


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(GOOD_CARD)), st.text(max_size=30))
def test_any_edit_of_a_good_card_gives_a_card_or_problems(position: int, insert: str) -> None:
    text = GOOD_CARD[:position] + insert + GOOD_CARD[position:]
    result = parse_card(text, PATH)
    assert (result.card is None) == bool(result.problems)
    lines = text.count("\n") + 1
    assert all(1 <= p.line <= lines + 1 for p in result.problems), result.problems

"""Mistakes that Markdown accepts silently: each is reported with its line and its fix."""

import pytest

from app.content.card import Problem
from app.content.parse import parse_card
from tests.cardtext import GOOD_CARD, line_of

PATH = "content/testdeck/scaling.md"
THIRD_FLAG = """\
### Saying it is tuned {#tuned}

It follows from the variance.

### Forgetting the heads {#heads}

Each head has its own $d_k$.
"""
# GOOD_CARD with a third red flag: at the deck standard, so it has no warnings.
STANDARD_CARD = GOOD_CARD.replace(
    "### Saying it is tuned {#tuned}\n\nIt follows from the variance.\n", THIRD_FLAG
)


def problems_of(text: str) -> list[Problem]:
    return parse_card(text, PATH).problems


def only_problem(text: str) -> Problem:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    return problems[0]


def warnings_of(text: str) -> list[Problem]:
    return parse_card(text, PATH).warnings


def test_the_standard_card_has_no_warnings() -> None:
    result = parse_card(STANDARD_CARD, PATH)
    assert result.card is not None
    assert result.problems == [] and result.warnings == []


def test_section_heading_at_the_wrong_level() -> None:
    # Deep dive: its section above (Analogy) takes any text; Key points would not.
    text = STANDARD_CARD.replace("## Deep dive", "### Deep dive")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "### Deep dive"),
        "'### Deep dive' is a section name at the wrong level: write '## Deep dive' "
        "(as it is, it is a sub-heading of the section above)",
    )


def test_follow_up_written_with_four_hashes() -> None:
    text = STANDARD_CARD.replace("### What does FlashAttention", "#### What does FlashAttention")
    problem = only_problem(text)
    assert problem.line == line_of(text, "#### What does")
    assert problem.message == (
        "'#### What does FlashAttention do? {#flash}' has a {#key} but is not an entry: "
        "follow-ups and red flags are '### ' headings"
    )


def test_follow_ups_written_as_a_list() -> None:
    start = STANDARD_CARD.index("### Why the square root?")
    end = STANDARD_CARD.index("## Red flags")
    text = (
        STANDARD_CARD[:start]
        + "- Why the square root?\n- What does FlashAttention do?\n\n"
        + STANDARD_CARD[end:]
    )
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "- Why the square root?"),
        "write each follow-up as a '### ' heading ending in {#key}, with its text below, "
        "not as a list item",
    )


def test_text_after_the_options() -> None:
    text = STANDARD_CARD.replace(
        "- [ ] a tuned constant {flag=tuned}\n",
        "- [ ] a tuned constant {flag=tuned}\n\nThe answer is the square root.\n",
    )
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "The answer is the square root."),
        "text after the options is not shown anywhere: move it above the list (the prompt), "
        "under the correct option (why it is right) or into the red flag it belongs to",
    )


def test_text_under_a_wrong_option() -> None:
    text = STANDARD_CARD.replace(
        "- [ ] a tuned constant {flag=tuned}\n",
        "- [ ] a tuned constant {flag=tuned}\n\n  Tuning is what people think.\n",
    )
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "  Tuning is what people think."),
        "text under a wrong option is not shown: its red flag explains it "
        "(only the correct option has an explanation under it)",
    )


def test_unclosed_code_fence_is_named_not_missing_sections() -> None:
    text = STANDARD_CARD.replace("scores = q @ k.T / d_k ** 0.5\n```\n", "scores = q @ k.T\n")
    problems = problems_of(text)
    assert (
        Problem(
            PATH,
            line_of(text, "```python"),
            "code fence opened here is never closed: everything below is shown as code; "
            "add a line ``` after the code",
        )
        in problems
    )
    assert not any("missing required section" in p.message for p in problems)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        (
            r"a \mathrel{=} b",
            r"\mathrel is not supported by the converter (it draws nothing) in formula "
            r"'a \mathrel{=} b': write the symbol alone",
        ),
        (
            r"\begin{aligne} a \end{aligne}",
            r"unknown environment 'aligne' (did you mean align?) in formula "
            r"'\begin{aligne} a \end{aligne}'",
        ),
        (r"\alpah", r"unknown LaTeX command \alpah (did you mean \alpha?) in formula '\alpah'"),
    ],
)
def test_formula_the_converter_would_drop(formula: str, message: str) -> None:
    text = STANDARD_CARD.replace("Averaging more dice.", f"Averaging\nmore ${formula}$ dice.")
    assert only_problem(text) == Problem(PATH, line_of(text, "more $"), message)


def test_operatorname_renders_upright() -> None:
    text = STANDARD_CARD.replace("Averaging more dice.", r"Averaging $\operatorname{fp32}$ dice.")
    card = parse_card(text, PATH).card
    assert card is not None
    html = str(card.sections["Analogy"].html)
    assert '<mi mathvariant="normal">f</mi>' in html and "<mo />" not in html


def test_unclosed_dollar() -> None:
    text = STANDARD_CARD.replace("Averaging more dice.", "Averaging $n$ and\n$d_k more dice.")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "$d_k more"),
        "a '$' without its closing '$': close the formula, or write \\$ for a dollar sign",
    )


def test_escaped_dollar_is_fine() -> None:
    text = STANDARD_CARD.replace("Averaging more dice.", "Averaging \\$5 of dice.")
    assert problems_of(text) == []


def test_live_number_with_quotes() -> None:
    text = STANDARD_CARD.replace(
        "Averaging more dice.", 'Variance\n{live}"score_variance.variance(d_k=8) = 8 ± 5%".'
    )
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "{live}"),
        "'{live}' must be followed by backticks, not quotes: "
        "{live}`demo.output(param=value) = claim ± tolerance`",
    )


def test_undefined_footnote() -> None:
    text = STANDARD_CARD.replace("Averaging more dice.", "Averaging\nmore dice.[^7]")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "[^7]"),
        "footnote [^7] is not defined: add a line '[^7]: the note'",
    )


def test_below_the_deck_standard_are_warnings() -> None:
    text = GOOD_CARD.replace(
        'sources:\n  - "Vaswani et al. 2017, [arXiv:1706.03762](https://arxiv.org/abs/1706.03762)"\n',
        "",
    )
    start = text.index("### What does FlashAttention")
    text = text[:start] + text[text.index("## Red flags") :]
    result = parse_card(text, PATH)
    assert result.card is not None and result.problems == []
    closing = text.splitlines().index("---", 1) + 1  # where 'sources:' would go
    assert [(w.line, w.message) for w in result.warnings] == [
        (closing, NO_SOURCES),
        (
            line_of(text, "## Follow-ups"),
            "only 1 in '## Follow-ups': the deck standard is 2 or more",
        ),
        (line_of(text, "## Red flags"), "only 2 in '## Red flags': the deck standard is 3 or more"),
    ]
    assert all(w.warning for w in result.warnings)
    assert str(result.warnings[0]).startswith(f"{PATH}:{closing}: warning: no sources")


NO_SOURCES = "no sources: add 'sources:' with where each claim comes from"


def test_inline_formula_too_wide_for_a_phone() -> None:
    wide = r"\operatorname{softmax}(z) \approx (0.99999,\ 1.2 \times 10^{-5},\ 1.5 \times 10^{-10})"
    text = STANDARD_CARD.replace("Averaging more dice.", f"Averaging\n${wide}$.")
    result = parse_card(text, PATH)
    assert result.problems == []
    [warning] = result.warnings
    assert warning.line == line_of(text, "$\\operatorname{softmax}")
    assert warning.message.startswith(f"inline formula '{wide}' is about ")
    assert warning.message.endswith(
        "more than a phone's line (36): make it display math, '$$' on lines of its own"
    )
    shown = text.replace(f"${wide}$", f"\n$$\n{wide}\n$$\n")
    assert warnings_of(shown) == []


@pytest.mark.parametrize(
    ("heading", "meant"),
    [
        ("Follow ups", "Follow-ups"),
        ("Redflags", "Red flags"),
        ("When it does not apply", "When it doesn't apply"),
        ("Deepdive", "Deep dive"),
    ],
)
def test_misspelt_section_names_suggest_the_right_one(heading: str, meant: str) -> None:
    text = STANDARD_CARD.replace(f"## {meant}", f"## {heading}")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, f"## {heading}"),
        f"unknown section '{heading}': did you mean '{meant}'?",
    )


def test_misspelt_front_matter_key() -> None:
    text = STANDARD_CARD.replace("tags:", "tag:")
    problem = only_problem(text)
    assert problem.line == line_of(text, "tag:")
    assert problem.message.startswith("unknown field 'tag': did you mean 'tags'? (known: id,")


def test_yaml_error_with_a_colon_in_a_value() -> None:
    text = STANDARD_CARD.replace(
        "title: The scaling factor", "title: Scaling: why divide\nquestion2: x: y"
    )
    problem = only_problem(text)
    assert problem.line == line_of(text, "title: Scaling")
    assert problem.message.startswith("bad YAML in front matter: ")
    assert problem.message.endswith("(a value that contains ': ' must be quoted: key: \"...\")")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (
            "tunned",
            "wrong option names red flag 'tunned', which the card lacks: did you mean "
            "'tuned'? (red flags: heads, sqrt-d-model, tuned)",
        ),
        (
            "a tuned constant",
            "red flag key 'a tuned constant' has spaces: keys are like "
            "{flag=KEY} (red flags: heads, sqrt-d-model, tuned)",
        ),
    ],
)
def test_red_flag_keys_in_options(flag: str, message: str) -> None:
    text = STANDARD_CARD.replace("{flag=tuned}", f"{{flag={flag}}}")
    assert only_problem(text) == Problem(PATH, line_of(text, "- [ ] a tuned"), message)


def test_missing_flag_lists_the_keys() -> None:
    text = STANDARD_CARD.replace(" {flag=tuned}", "")
    assert only_problem(text).message == (
        "wrong option needs '{flag=KEY}' naming the red flag it shows "
        "(red flags: heads, sqrt-d-model, tuned)"
    )


def test_follow_up_key_is_suggested_in_whole_words() -> None:
    text = STANDARD_CARD.replace(
        "### Why the square root? {#why-sqrt}",
        "### Why does the standard deviation grow as the square root of the dimension?",
    )
    assert only_problem(text).message == (
        "follow-up 'Why does the standard deviation grow as the square root of the dimension?' "
        "needs a stable key: end the heading with {#why-does-the-standard-deviation-grow-as}"
    )


def test_code_to_run_needs_its_output_block() -> None:
    text = STANDARD_CARD.replace("```python\n", "```python run\n")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "```python run"),
        "a 'python run' block needs a fenced 'output' block right after it",
    )
    with_output = text.replace("d_k ** 0.5\n```\n", "d_k ** 0.5\n```\n\n```output\n1\n```\n")
    assert problems_of(with_output) == []


def test_code_that_prints_but_is_not_run_is_a_warning() -> None:
    text = STANDARD_CARD.replace("d_k ** 0.5\n", "d_k ** 0.5\nprint(scores)\n")
    [warning] = warnings_of(text)
    assert warning.line == line_of(text, "```python")
    assert warning.message.startswith("this code prints: mark it 'python run'")


def test_shuffled_options_depend_only_on_the_seed() -> None:
    quiz = parse_card(STANDARD_CARD, PATH).card.multiple_choice  # type: ignore[union-attr]
    assert quiz is not None
    assert quiz.shuffled("ada:1") == quiz.shuffled("ada:1")
    firsts = {quiz.shuffled(f"ada:{n}")[0].key for n in range(40)}
    assert firsts == {"a", "b", "c"}  # the correct option ("b") is not always in one place

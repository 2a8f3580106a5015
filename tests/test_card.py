"""The card format: a good card parses; each kind of problem has its message and line."""

import pytest
from bs4 import BeautifulSoup

from app.content.card import Problem
from app.content.parse import parse_card
from app.content.rendering import MARKDOWN, render_tokens
from tests.cardtext import GOOD_CARD, line_of

PATH = "content/testdeck/scaling.md"


def problems_of(text: str) -> list[Problem]:
    return parse_card(text, PATH).problems


def only_problem(text: str) -> Problem:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    return problems[0]


def test_good_card_parses_every_part() -> None:
    result = parse_card(GOOD_CARD, PATH)
    assert result.problems == []
    card = result.card
    assert card is not None
    assert card.id == "test-scaling"
    assert card.deck == "testdeck"
    assert card.tags == ("attention", "softmax")
    assert list(card.sections) == [
        "Answer",
        "TL;DR",
        "Key points",
        "Analogy",
        "Deep dive",
        "When it doesn't apply",
        "Quick scan",
        "Side by side",
        "Real-world examples",
        "Follow-ups",
        "Red flags",
    ]
    assert [point.text for point in card.key_points] == [
        "Divide by sqrt(d_k), the per-head key dimension",
        "The dot product's variance grows with d_k",
        "Unscaled scores saturate the softmax",
    ]
    assert [f.key for f in card.follow_ups] == ["why-sqrt", "flash"]
    assert [r.key for r in card.red_flags] == ["sqrt-d-model", "tuned"]
    quiz = card.multiple_choice
    assert quiz is not None
    assert [c.key for c in quiz.choices] == ["a", "b", "c"]
    assert quiz.correct.key == "b"
    assert quiz.choice("a") is not None and quiz.choice("a").flag == "sqrt-d-model"  # type: ignore[union-attr]
    assert [link.card_id for link in card.links] == ["test-other"]


def test_math_becomes_mathml_and_no_latex_is_left() -> None:
    card = parse_card(GOOD_CARD, PATH).card
    assert card is not None
    assert "<math" in card.question and "\\top" not in card.question
    deep = card.sections["Deep dive"].html
    assert 'class="math-display"' in deep and "\\operatorname" not in deep


def test_code_is_highlighted_and_footnotes_collected() -> None:
    card = parse_card(GOOD_CARD, PATH).card
    assert card is not None
    assert (
        '<code class="language-python"><span class="n">scores</span>'
        in card.sections["Deep dive"].html
    )
    assert 'id="fn1"' in card.notes


def test_card_links_point_at_card_pages() -> None:
    card = parse_card(GOOD_CARD, PATH).card
    assert card is not None
    assert 'href="/cards/test-other"' in card.sections["When it doesn't apply"].html


@pytest.mark.parametrize(
    "payload",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        '<div hx-get="/admin" hx-trigger="load">x</div>',
        '<svg onload="alert(1)"><circle/></svg>',
        '<p style="background:url(javascript:alert(1))">x</p>',
        '<iframe src="https://example.com"></iframe>',
    ],
)
def test_raw_html_is_sanitised(payload: str) -> None:
    text = GOOD_CARD.replace("Averaging more dice.", f"Averaging more dice.\n\n{payload}\n")
    card = parse_card(text, PATH).card
    assert card is not None
    soup = BeautifulSoup(str(card.sections["Analogy"].html), "html.parser")
    assert not soup.find_all(["script", "iframe", "object", "embed"])
    for element in soup.find_all(True):
        for name, value in element.attrs.items():
            assert not name.startswith(("on", "hx-", "data-hx")), (name, payload)
            assert name != "style"
            text_value = " ".join(value) if isinstance(value, list) else value
            assert "javascript:" not in text_value.lower(), (name, payload)


@pytest.mark.parametrize(
    "formula",
    ['\\text{<img src="x" onerror="alert(1)"/>}', "\\text{<b onclick='x()'>b</b>}"],
)
def test_markup_inside_a_formula_never_reaches_the_page(formula: str) -> None:
    # latex2mathml copies \text{} into the output unescaped: the sanitiser must catch it.
    env: dict[str, object] = {}
    html = render_tokens(MARKDOWN.parse(f"x ${formula}$", env), env)
    soup = BeautifulSoup(str(html), "html.parser")
    assert not soup.find_all("img")
    assert all(not name.startswith("on") for el in soup.find_all(True) for name in el.attrs)


def test_bad_yaml_points_at_its_line() -> None:
    text = GOOD_CARD.replace("tags: [attention, softmax]", "tags: [attention, softmax")
    problem = only_problem(text)
    assert problem.message.startswith("bad YAML in front matter:")
    assert problem.line in (line_of(text, "tags:"), line_of(text, "tags:") + 1)


def test_missing_front_matter() -> None:
    assert only_problem("## Answer\n\nx\n") == Problem(
        PATH, 1, "missing front matter: the file must start with '---'"
    )


def test_missing_required_field() -> None:
    text = GOOD_CARD.replace("minutes: 4\n", "")
    assert only_problem(text) == Problem(PATH, 1, "missing required field 'minutes'")


def test_unknown_field_is_a_typo() -> None:
    text = GOOD_CARD.replace("tags: [attention, softmax]", "tag: [attention]")
    problem = only_problem(text)
    assert problem.line == line_of(text, "tag:")
    assert problem.message.startswith("unknown field 'tag'")


def test_deck_must_match_folder() -> None:
    text = GOOD_CARD.replace("deck: testdeck", "deck: other")
    problem = only_problem(text)
    assert problem.line == line_of(text, "deck:")
    assert "deck 'other' does not match the folder 'testdeck'" in problem.message


def test_bad_difficulty_and_id() -> None:
    text = GOOD_CARD.replace("difficulty: medium", "difficulty: brutal").replace(
        "id: test-scaling", "id: Test Scaling"
    )
    messages = {(p.line, p.message.split(" must")[0]) for p in problems_of(text)}
    assert messages == {
        (line_of(text, "id:"), "id 'Test Scaling'"),
        (line_of(text, "difficulty:"), "difficulty 'brutal'"),
    }


def test_unknown_section_suggests_the_right_name() -> None:
    text = GOOD_CARD.replace("## TL;DR", "## TL;dr")
    problem = only_problem(text)
    assert problem == Problem(
        PATH, line_of(text, "## TL;dr"), "unknown section 'TL;dr': did you mean 'TL;DR'?"
    )


def test_unknown_section_lists_the_names() -> None:
    text = GOOD_CARD.replace("## Analogy", "## Metaphor")
    problem = only_problem(text)
    assert problem.line == line_of(text, "## Metaphor")
    assert problem.message.startswith("unknown section 'Metaphor': expected one of: Answer, TL;DR")


def test_missing_required_section() -> None:
    start = GOOD_CARD.index("## TL;DR")
    end = GOOD_CARD.index("## Key points")
    text = GOOD_CARD[:start] + GOOD_CARD[end:]
    # Reported on the first line after the front matter.
    assert only_problem(text) == Problem(PATH, 12, "missing required section '## TL;DR'")


def test_empty_section() -> None:
    text = GOOD_CARD.replace("Averaging more dice.\n", "")
    assert only_problem(text) == Problem(
        PATH, line_of(text, "## Analogy"), "section 'Analogy' is empty"
    )


def test_section_twice() -> None:
    text = GOOD_CARD.replace("## Quick scan", "## Analogy")
    first = line_of(text, "## Analogy")
    second = line_of(text, "State it, derive it.") - 2
    assert only_problem(text) == Problem(
        PATH, second, f"section 'Analogy' appears twice (first on line {first})"
    )


def test_follow_up_without_body() -> None:
    text = GOOD_CARD.replace("It scales inside each block.\n", "")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "### What does FlashAttention do?"),
        "follow-up 'What does FlashAttention do?' has no body: write its approach",
    )


def test_red_flag_without_body() -> None:
    text = GOOD_CARD.replace("It follows from the variance.\n", "")
    problem = only_problem(text)
    assert problem.line == line_of(text, "### Saying it is tuned")
    assert problem.message == (
        "red flag 'Saying it is tuned' has no body: write why it is wrong and what to say instead"
    )


def test_follow_up_needs_a_key() -> None:
    text = GOOD_CARD.replace(" {#why-sqrt}", "")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "### Why the square root?"),
        "follow-up 'Why the square root?' needs a stable key: end the heading with {#why-the-square-root}",
    )


def test_follow_ups_section_needs_an_entry() -> None:
    start = GOOD_CARD.index("### Why the square root?")
    end = GOOD_CARD.index("## Red flags")
    text = GOOD_CARD[:start] + "Some intro.\n\n" + GOOD_CARD[end:]
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "## Follow-ups"),
        "'Follow-ups' needs at least one '### ' follow-up with a body",
    )


def test_the_correct_option_may_explain_itself_below() -> None:
    text = GOOD_CARD.replace(
        "- [x] $\\sqrt{d_k}$\n",
        "- [x] $\\sqrt{d_k}$\n\n  The variance of $q \\cdot k$ is $d_k$.\n\n  - so its spread is $\\sqrt{d_k}$\n",
    )
    card = parse_card(text, PATH).card
    assert card is not None, parse_card(text, PATH).problems
    quiz = card.multiple_choice
    assert quiz is not None
    assert [c.key for c in quiz.choices] == ["a", "b", "c"]  # the nested list is no option
    explanation = str(quiz.correct.explanation)
    assert explanation.startswith("<p>The variance of <math")
    assert "<li>so its spread is <math" in explanation
    assert all(choice.explanation is None for choice in quiz.choices if not choice.correct)
    plain = parse_card(GOOD_CARD, PATH).card
    assert plain is not None and plain.multiple_choice is not None
    assert plain.multiple_choice.correct.explanation is None


def test_multiple_choice_needs_exactly_one_correct() -> None:
    text = GOOD_CARD.replace("- [ ] a tuned constant {flag=tuned}", "- [x] a tuned constant")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "## Multiple choice"),
        "multiple choice needs exactly one correct option ('[x]'), found 2",
    )


def test_multiple_choice_with_no_correct_option() -> None:
    text = GOOD_CARD.replace("- [x] $\\sqrt{d_k}$", "- [ ] $\\sqrt{d_k}$ {flag=tuned}")
    problem = only_problem(text)
    assert problem.message == "multiple choice needs exactly one correct option ('[x]'), found 0"


def test_wrong_option_must_name_an_existing_red_flag() -> None:
    text = GOOD_CARD.replace("{flag=tuned}", "{flag=tunned}")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "{flag=tunned}"),
        "wrong option names red flag 'tunned', which the card lacks: did you mean 'tuned'? "
        "(red flags: sqrt-d-model, tuned)",
    )


def test_wrong_option_without_flag() -> None:
    text = GOOD_CARD.replace(" {flag=tuned}", "")
    problem = only_problem(text)
    assert problem.line == line_of(text, "- [ ] a tuned constant")
    assert problem.message.startswith("wrong option needs '{flag=KEY}'")


def test_formula_that_does_not_convert() -> None:
    text = GOOD_CARD.replace("A normalised", "").replace(
        "Averaging more dice.", "Averaging $\\frobnicate{x}$ dice."
    )
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "frobnicate"),
        "unknown LaTeX command \\frobnicate in formula '\\frobnicate{x}'",
    )


def test_unclosed_brace_in_display_math() -> None:
    text = GOOD_CARD.replace("\\operatorname{Var}(q \\cdot k) = d_k", "\\frac{1}{d_k")
    problem = only_problem(text)
    assert problem.message == "unclosed '{' in formula"
    assert problem.line == line_of(text, "$$")


def test_placeholder_is_flagged() -> None:
    text = GOOD_CARD.replace("Averaging more dice.", "TODO: write the analogy.")
    assert only_problem(text) == Problem(
        PATH, line_of(text, "TODO"), "placeholder 'TODO' left in the card: replace it"
    )


def test_text_before_first_section() -> None:
    text = GOOD_CARD.replace("## Answer", "Stray text.\n\n## Answer")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "Stray text."),
        "text before the first '## Section' heading: move it into a section",
    )


# -- Key points: what an interviewer listens for ---------------------------------

KEY_POINTS = """## Key points

- Divide by $\\sqrt{d_k}$, the per-head key dimension
- The dot product's variance grows with $d_k$
- Unscaled scores saturate the softmax
"""


def with_key_points(section: str) -> str:
    assert KEY_POINTS in GOOD_CARD
    return GOOD_CARD.replace(KEY_POINTS, section)


def test_key_points_render_one_by_one_with_their_lines() -> None:
    card = parse_card(GOOD_CARD, PATH).card
    assert card is not None
    first = card.key_points[0]
    assert "<math" in first.html and "\\sqrt" not in first.html
    assert first.line == line_of(GOOD_CARD, "- Divide by")
    assert [p.line for p in card.key_points] == [first.line, first.line + 1, first.line + 2]
    assert card.sections["Key points"].html  # shown as a section after a reveal too


def test_key_points_are_required() -> None:
    text = with_key_points("")
    assert only_problem(text) == Problem(PATH, 12, "missing required section '## Key points'")


@pytest.mark.parametrize("count", [2, 7])
def test_key_points_need_three_to_six(count: int) -> None:
    bullets = "".join(f"- Point {n}\n" for n in range(count))
    text = with_key_points(f"## Key points\n\n{bullets}\n")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, "## Key points"),
        f"'Key points' needs 3 to 6 points, found {count}: list what an interviewer listens for",
    )


def test_a_long_key_point_names_its_length_and_the_limit() -> None:
    long = "x" * 121
    text = with_key_points(f"## Key points\n\n- One\n- {long}\n- Three\n\n")
    assert only_problem(text) == Problem(
        PATH,
        line_of(text, long),
        "key point is 121 characters: keep each to 120 "
        "(a phrase an interviewer listens for, not a paragraph)",
    )


@pytest.mark.parametrize(
    ("section", "needle", "message"),
    [
        (
            "Some prose.\n\n- One\n- Two\n- Three\n",
            "Some prose.",
            "'Key points' holds one bullet list and nothing else: one short point per '- ' line",
        ),
        (
            "1. One\n2. Two\n3. Three\n",
            "1. One",
            "'Key points' holds one bullet list and nothing else: one short point per '- ' line",
        ),
        (
            "- One\n  - nested\n- Two\n- Three\n",
            "- One",
            "a key point is one short line: no nested lists, paragraphs or code in a bullet",
        ),
        ("- One\n-\n- Two\n- Three\n", "-\n", "key point is empty: write it or delete the bullet"),
    ],
)
def test_key_points_are_one_plain_list(section: str, needle: str, message: str) -> None:
    text = with_key_points(f"## Key points\n\n{section}\n")
    problem = only_problem(text)
    assert problem.message == message
    assert problem.line == text[: text.index(needle, text.index("## Key points"))].count("\n") + 1


@pytest.mark.parametrize("field", ["question", "title"])
def test_a_bad_formula_in_the_question_or_title_is_a_problem(field: str) -> None:
    """Checked like a formula in the body: once, it only showed an error on the page."""
    written = f"{field}: What is $\\frac{{1}}{{$ here?"
    text = "\n".join(
        written if line.startswith(f"{field}:") else line for line in GOOD_CARD.splitlines()
    )
    result = parse_card(text, PATH)
    assert [str(p) for p in result.problems] == [
        f"{PATH}:{line_of(text, written)}: unclosed '{{' in formula"
    ]

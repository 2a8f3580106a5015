"""The review page through the ASGI client, parsed as HTML: review, reveal, grade, refuse."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from fastapi.testclient import TestClient

from app.content.library import Library
from app.practice import MAX_ANSWER_LENGTH
from app.settings import Settings
from app.web import create_app
from app.web.templating import templates
from tests.conftest import CSRFClient

HX = {"HX-Request": "true"}


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def one(page: BeautifulSoup | Tag, selector: str) -> Tag:
    found = page.select_one(selector)
    assert found is not None, f"nothing matches {selector}"
    return found


def text_of(page: BeautifulSoup | Tag, selector: str) -> str:
    return " ".join(one(page, selector).get_text(" ").split())


def fields(html: str, selector: str = "form.answer-form") -> dict[str, str]:
    form = one(soup_of(html), selector)
    return {str(i["name"]): str(i.get("value", "")) for i in form.select("input[type=hidden]")}


def reviews(client: TestClient) -> list[dict[str, object]]:
    exported: list[dict[str, object]] = client.get("/progress").json()["reviews"]
    return exported


def revealed_form(client: TestClient, answer: str = "my answer") -> dict[str, str]:
    shown = fields(client.get("/review").text)
    page = client.post("/review/reveal", data={**shown, "answer": answer}, headers=HX)
    return fields(page.text, "form.grade-form")


def client_with(db_settings: Settings, **changes: object) -> TestClient:
    return CSRFClient(create_app(db_settings.model_copy(update=changes)))


@pytest.fixture
def client(db_client: TestClient) -> Iterator[TestClient]:
    """The app on the test content, on SQLite and on PostgreSQL."""
    yield db_client


def test_review_page_asks_the_first_new_item(client: TestClient) -> None:
    page = soup_of(client.get("/review").text)
    assert text_of(page, "h1") == "Review"
    assert one(page, "nav a[aria-current=page]").get_text() == "Review"
    assert text_of(page, ".queue-counts") == "0 due now · 5 new left today"
    assert text_of(page, "#review-question") == "What is softmax?"
    assert "new" in text_of(page, "#review-item .meta")
    box = one(page, "textarea#review-answer")
    assert one(page, "label[for=review-answer]").get_text() == "Your answer"
    assert "review-question" in str(box["aria-describedby"])
    assert fields(str(page))["item"] == "test-other"
    assert fields(str(page))["version"] == "0"
    assert len(fields(str(page))["token"]) == 32
    assert [o["value"] for o in page.select("#deck-filter option")] == ["", "testdeck"]


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every (template name, context) rendered during the test, in order."""
    calls: list[tuple[str, dict[str, Any]]] = []
    original = templates.TemplateResponse

    def record(request: Any, name: str, context: dict[str, Any], **kwargs: Any) -> Any:
        calls.append((name, dict(context)))
        return original(request, name, context, **kwargs)

    monkeypatch.setattr(templates, "TemplateResponse", record)
    return calls


def test_pages_and_fragments_come_from_their_templates(
    client: TestClient, rendered: list[tuple[str, dict[str, Any]]]
) -> None:
    page = client.get("/review")
    name, context = rendered[-1]
    assert name == "review.html"
    assert (context["mode"], context["deck"], context["due"].item.key) == (
        "due",
        None,
        "test-other",
    )
    assert context["status"].new_left_today == 5
    form = fields(page.text)
    client.post("/review/reveal", data={**form, "answer": ""}, headers=HX)
    name, context = rendered[-1]
    assert name == "_review_item.html"
    assert [rating.name for rating, _ in context["intervals"]] == ["AGAIN", "HARD", "GOOD", "EASY"]
    client.post("/review/grade", data={**form, "rating": "2"}, headers=HX)
    name, context = rendered[-1]
    assert name == "_review.html"
    assert (context["recorded"].rating.name, context["oob"]) == ("HARD", True)
    client.get("/stats")
    name, context = rendered[-1]
    assert name == "stats.html"
    assert context["stats"].recent_reviews == 1


def test_reveal_shows_the_answer_beside_yours_and_four_grades_with_intervals(
    client: TestClient,
) -> None:
    shown = fields(client.get("/review").text)
    response = client.post(
        "/review/reveal", data={**shown, "answer": "exp <b>then</b> sum"}, headers=HX
    )
    page = soup_of(response.text)
    assert page.find("html") is None and one(page, "#review-item")
    assert text_of(page, ".your-answer .typed") == "exp <b>then</b> sum"
    assert text_of(page, "#answer-heading") == "Answer"
    points = [li.get_text() for li in page.select("#key-points li")]
    assert points == [
        "Exponentiate each score",
        "Divide by the sum, so the weights add up to 1",
        "Larger scores get exponentially more weight",
    ]
    buttons = page.select("form.grade-form button[name=rating]")
    assert [b["value"] for b in buttons] == ["1", "2", "3", "4"]
    assert [b["data-shortcut"] for b in buttons] == ["1", "2", "3", "4"]
    assert [text_of(b, ".grade-name") for b in buttons] == ["Again", "Hard", "Good", "Easy"]
    intervals = [text_of(b, ".grade-interval") for b in buttons]
    assert intervals[0] == "1 min" and intervals[3].endswith("days"), intervals
    grade_form = fields(response.text, "form.grade-form")
    assert grade_form["token"] == shown["token"]  # the one-time token rides along to the grade


def test_a_follow_up_shows_its_card_question_as_context(db_settings: Settings) -> None:
    with client_with(db_settings) as client:
        form = revealed_form(client)
        client.post("/review/grade", data={**form, "rating": "4"})
        page = soup_of(client.get("/review").text)
        assert text_of(page, "#review-question") == "Why exp?"
        assert text_of(page, ".context") == "Follow-up to: What is softmax?"
        shown = fields(str(page))
        assert shown["item"] == "test-other/why-exp"
        revealed = soup_of(
            client.post("/review/reveal", data={**shown, "answer": ""}, headers=HX).text
        )
        assert text_of(revealed, "#approach-heading") == "Approach"
        assert text_of(revealed, ".section-approach .prose") == "Positive and smooth."


def test_grading_over_htmx_records_it_and_swaps_in_the_next_item(client: TestClient) -> None:
    form = revealed_form(client, "normalised exponential")
    response = client.post("/review/grade", data={**form, "rating": "3"}, headers=HX)
    assert response.status_code == 200
    page = soup_of(response.text)
    assert one(page, "div#review")
    notice = one(page, "#review-notice[hx-swap-oob]")
    assert " ".join(notice.get_text().split()) == (
        "Recorded Good for “Another card”: back in 10 min."
    )
    assert fields(response.text)["item"] == "test-other/why-exp"
    [recorded] = reviews(client)
    assert recorded["rating"] == 3
    assert recorded["answer"] == "normalised exponential"
    assert recorded["card_id"] == "test-other" and recorded["follow_up"] == ""


def test_grading_without_javascript_redirects_back_to_the_queue(client: TestClient) -> None:
    form = revealed_form(client)
    form["deck"] = "testdeck"
    response = client.post("/review/grade", data={**form, "rating": "2"}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"/review?deck=testdeck&recorded={form['token']}"


def test_grading_without_javascript_lands_on_the_same_confirmation(client: TestClient) -> None:
    """The page after the redirect says what was recorded, as the htmx swap does."""
    form = revealed_form(client)
    page = soup_of(client.post("/review/grade", data={**form, "rating": "3"}).text)
    notice = page.select_one("#review-notice .notice-success")
    assert notice is not None
    assert " ".join(notice.get_text().split()).startswith(
        "Recorded Good for “Another card”: back in 10 min."
    )
    assert page.select_one("#review-question") is not None  # and the next item is asked
    # A token nobody graded with, or none, confirms nothing.
    for token in ["0" * 32, "forged"]:
        page = soup_of(client.get("/review", params={"recorded": token}).text)
        assert page.select_one("#review-notice .notice") is None, token


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"rating": "7"}, 422, "Grade with 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy), not '7'"),
        ({"rating": ""}, 422, "Grade with 1 (Again)"),
        ({"rating": "3", "item": "no-such-card"}, 404, "no card has the id 'no-such-card'"),
        ({"rating": "3", "item": "test-other/nope"}, 404, "has no follow-up 'nope'"),
        ({"rating": "3", "token": "forged"}, 422, "no valid review token"),
        ({"rating": "3", "version": "x"}, 422, "version must be a whole number"),
        ({"rating": "3", "version": "5"}, 409, "was graded since this page was shown"),
    ],
)
def test_a_bad_grade_is_refused_with_a_reason_and_stores_nothing(
    client: TestClient, change: dict[str, str], status: int, message: str
) -> None:
    form = revealed_form(client)
    before = client.get("/stats").text.count("review")
    response = client.post("/review/grade", data={**form, **change}, headers=HX)
    assert response.status_code == status
    assert message in text_of(soup_of(response.text), "#review-notice")
    assert "Not recorded." in response.text
    assert one(soup_of(response.text), "div#review")  # the queue is still there to go on with
    assert reviews(client) == []
    assert client.get("/stats").text.count("review") == before


def test_a_bad_grade_without_javascript_is_a_full_page_with_the_status(
    client: TestClient,
) -> None:
    form = revealed_form(client)
    response = client.post("/review/grade", data={**form, "rating": "0"})
    assert response.status_code == 422
    page = soup_of(response.text)
    assert text_of(page, "h1") == "Review"
    assert "not '0'" in text_of(page, "#review-notice")


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_an_over_long_field_is_a_page_that_names_it(client: TestClient, htmx: bool) -> None:
    # The browser stops at the limit (maxlength); a forged form gets past it.
    box = one(soup_of(client.get("/review").text), "textarea[name=answer]")
    assert box["maxlength"] == str(MAX_ANSWER_LENGTH)
    form = revealed_form(client)
    too_long = "x" * (MAX_ANSWER_LENGTH + 1)
    response = client.post(
        "/review/grade", data={**form, "answer": too_long}, headers=HX if htmx else {}
    )
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("text/html")
    page = soup_of(response.text)
    message = (
        "answer: String should have at most 20000 characters. "
        "Nothing was stored: go back, fix it and send it again."
    )
    if htmx:  # a notice to swap in
        assert text_of(page, ".notice-error") == f"Check what you sent. {message}"
    else:  # a whole page
        assert text_of(page, "h1") == "Check what you sent"
        assert text_of(page, ".error-message") == message
    assert reviews(client) == []


def test_a_double_clicked_grade_records_one_review(client: TestClient) -> None:
    form = revealed_form(client)
    first = client.post("/review/grade", data={**form, "rating": "3"}, headers=HX)
    second = client.post("/review/grade", data={**form, "rating": "3"}, headers=HX)
    assert (first.status_code, second.status_code) == (200, 409)
    assert "already recorded" in text_of(soup_of(second.text), "#review-notice")
    assert len(reviews(client)) == 1


def test_a_form_from_another_tab_is_stale_after_a_grade(client: TestClient) -> None:
    tab_one = revealed_form(client)
    tab_two = revealed_form(client)  # the same item, shown again: another token
    assert tab_one["item"] == tab_two["item"] and tab_one["token"] != tab_two["token"]
    assert client.post("/review/grade", data={**tab_one, "rating": "4"}).status_code == 200
    stale = client.post("/review/grade", data={**tab_two, "rating": "1"}, headers=HX)
    assert stale.status_code == 409
    assert "another tab, or a second click" in stale.text
    assert [r["rating"] for r in reviews(client)] == [4]


def test_revealing_a_stale_form_says_so_before_you_grade(client: TestClient) -> None:
    shown = fields(client.get("/review").text)
    client.post("/review/grade", data={**shown, "rating": "3"})
    response = client.post("/review/reveal", data={**shown, "answer": ""}, headers=HX)
    assert response.status_code == 409
    assert "already recorded" in response.text


def test_when_nothing_is_due_the_page_says_when_and_offers_practice(
    db_settings: Settings,
) -> None:
    with client_with(db_settings, new_items_per_day=1) as client:
        form = revealed_form(client)
        client.post("/review/grade", data={**form, "rating": "1"})
        page = soup_of(client.get("/review").text)
        assert text_of(page, ".review-empty h2") == "Nothing is due"
        assert text_of(page, ".review-empty p").startswith("The next item is due in 1 min (")
        assert "today’s limit of 1 new item; 4 more are waiting" in text_of(page, ".review-empty")
        practice = one(page, ".review-empty a.button")
        assert practice.get_text() == "Practice anyway"
        assert practice["href"] == "/review?mode=practice"


def test_practice_anyway_records_the_review_but_not_the_schedule(
    db_settings: Settings,
) -> None:
    with client_with(db_settings, new_items_per_day=1) as client:
        form = revealed_form(client)
        client.post("/review/grade", data={**form, "rating": "4"})
        page = client.get("/review", params={"mode": "practice"})
        assert text_of(soup_of(page.text), "h1") == "Practice anyway"
        shown = fields(page.text)
        assert (shown["item"], shown["mode"]) == ("test-other", "practice")
        revealed = client.post("/review/reveal", data={**shown, "answer": ""}, headers=HX)
        assert soup_of(revealed.text).select(".grade-interval") == []  # nothing to promise
        grade = fields(revealed.text, "form.grade-form")
        response = client.post("/review/grade", data={**grade, "rating": "1"}, headers=HX)
        assert "practice, so its schedule did not change" in response.text
        assert fields(response.text)["item"] == "test-other/why-exp"  # on to the next one
        assert [(r["rating"], r["practice"]) for r in reviews(client)] == [(4, False), (1, True)]
        assert text_of(soup_of(client.get("/review").text), ".review-empty h2") == (
            "Nothing is due"
        )


def test_the_deck_filter_must_name_a_deck(client: TestClient) -> None:
    assert client.get("/review", params={"deck": "testdeck"}).status_code == 200
    response = client.get("/review", params={"deck": "nope"})
    assert response.status_code == 404
    assert text_of(soup_of(response.text), ".error-message") == "There is no deck called 'nope'."


def test_multiple_choice_attempts_are_recorded(client: TestClient, content_dir: Path) -> None:
    client.post("/cards/test-scaling/choice", data={"choice": "a"})
    client.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=HX)
    choices = client.get("/progress").json()["choices"]
    assert [(c["card_id"], c["choice"], c["correct"]) for c in choices] == [
        ("test-scaling", "a", False),
        ("test-scaling", "b", True),
    ]
    quiz = Library(content_dir).load().cards["test-scaling"].multiple_choice
    assert quiz is not None
    assert choices[1]["choice_text"] == quiz.choices[1].text  # the wording, as it was then
    # The option's identity: the red flag a wrong one shows, "" for the right one.
    assert [c["red_flag"] for c in choices] == ["sqrt-d-model", ""]
    # An option that does not exist is refused and not recorded.
    assert client.post("/cards/test-scaling/choice", data={"choice": "z"}).status_code == 422
    assert len(client.get("/progress").json()["choices"]) == 2


def test_reordered_options_keep_what_an_old_answer_meant(
    client: TestClient, content_dir: Path
) -> None:
    client.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=HX)
    card_file = content_dir / "testdeck" / "scaling.md"
    text = card_file.read_text()
    first = "- [ ] $\\sqrt{d_\\text{model}}$ {flag=sqrt-d-model}\n"
    last = "- [ ] a tuned constant {flag=tuned}\n"
    assert first in text and last in text
    card_file.write_text(text.replace(first, "").replace(last, last + first))
    reordered = Library(content_dir).load().cards["test-scaling"].multiple_choice
    assert reordered is not None and reordered.choice("a").flag != "sqrt-d-model"  # type: ignore[union-attr]
    [attempt] = client.get("/progress").json()["choices"]
    assert (attempt["choice"], attempt["red_flag"]) == ("a", "sqrt-d-model")

"""Pages through the ASGI client, parsed as HTML: what a learner sees and can do."""

from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from tests.cardtext import OTHER_CARD
from tests.conftest import CSRFClient

HX = {"HX-Request": "true"}


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def test_home_lists_decks_with_counts(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    link = soup_of(response.text).select_one("ul.deck-list a")
    assert link is not None
    assert link["href"] == "/decks/testdeck"
    assert " ".join(link.get_text().split()) == "Testdeck 2 cards"


def test_search_filters_by_title_question_and_tag(client: TestClient) -> None:
    for query, expected in [
        ("scaling", ["The scaling factor"]),  # title
        ("softmax", ["Another card", "The scaling factor"]),  # question / tag
        ("attention", ["The scaling factor"]),  # tag only
        ("nothing-like-this", []),
    ]:
        page = soup_of(client.get("/", params={"q": query}).text)
        titles = [a.get_text() for a in page.select("#results ul.card-list li > a")]
        assert titles == expected, query


def test_search_ranks_title_then_question_then_tags_then_body(
    settings: Settings, content_dir: Path
) -> None:
    """Where the word is decides the order, not the alphabet (app/search.py)."""
    for n, (title, question, tags, body) in enumerate(
        [
            ("Apple", "What is it?", "fruit", "A zebra in the answer."),
            ("Banana", "What is it?", "zebra", "Yellow."),
            ("Cherry", "What is a zebra?", "fruit", "Red."),
            ("Date", "Which zebra card is it?", "fruit", "Brown."),
            ("Zebra crossing", "What is it?", "fruit", "Stripes."),
            ("Zebra eggplant", "Which card is it?", "fruit", "Purple."),
        ]
    ):
        text = (
            OTHER_CARD.replace("id: test-other", f"id: rank-{n}")
            .replace("title: Another card", f"title: {title}")
            .replace("question: What is softmax?", f"question: {question}\ntags: [{tags}]")
            .replace("A normalised exponential.", body)
        )
        (content_dir / "testdeck" / f"rank-{n}.md").write_text(text)
    with TestClient(create_app(settings)) as client:
        page = soup_of(client.get("/", params={"q": "Zebra"}).text)
        titles = [a.get_text() for a in page.select("#results ul.card-list li > a")]
        assert titles == ["Zebra crossing", "Zebra eggplant", "Cherry", "Date", "Banana", "Apple"]
        # A word in the title beats two in the question; every word must be somewhere.
        page = soup_of(client.get("/", params={"q": "zebra card"}).text)
        titles = [a.get_text() for a in page.select("#results ul.card-list li > a")]
        assert titles == ["Zebra eggplant", "Date"]


def test_search_says_how_many_cards_match_in_words(client: TestClient) -> None:
    for query, heading in [
        ("dice", "1 card matches “dice”"),  # found in the body only
        ("softmax", "2 cards match “softmax”"),
        ("nothing-like-this", "0 cards match “nothing-like-this”"),
    ]:
        page = soup_of(client.get("/", params={"q": query}).text)
        assert page.select_one("#results h2").get_text() == heading  # type: ignore[union-attr]


def test_search_from_htmx_returns_only_the_results(client: TestClient) -> None:
    response = client.get("/", params={"q": "scaling"}, headers=HX)
    page = soup_of(response.text)
    assert page.find("html") is None
    assert page.select_one("#results") is not None
    # The page and the fragment share a URL: a cache must keep them apart.
    assert "HX-Request" in response.headers["vary"]


def test_deck_page_lists_cards_with_difficulty_and_minutes(client: TestClient) -> None:
    page = soup_of(client.get("/decks/testdeck").text)
    items = page.select("ul.card-list li")
    assert [li.select_one("a").get_text() for li in items] == ["Another card", "The scaling factor"]  # type: ignore[union-attr]
    meta = items[1].select_one(".meta").get_text(" ", strip=True)  # type: ignore[union-attr]
    assert meta.startswith("medium · 4 min")


def test_card_page_asks_the_question_first_and_hides_the_answer(client: TestClient) -> None:
    page = soup_of(client.get("/cards/test-scaling").text)
    h1 = page.select_one("h1#question")
    assert h1 is not None and h1.find("math") is not None
    assert page.select_one("textarea[name=answer]") is not None
    assert page.select_one("label[for=answer-box]") is not None
    assert page.select_one("#answer") is None  # the Answer section comes after Reveal


def test_reveal_shows_every_section_beside_the_typed_answer(client: TestClient) -> None:
    response = client.post("/cards/test-scaling/reveal", data={"answer": "divide by <sqrt d_k>"})
    page = soup_of(response.text)
    assert page.select_one(".your-answer .typed").get_text() == "divide by <sqrt d_k>"  # type: ignore[union-attr]
    headings = [h.get_text() for h in page.select("#practice h2")]
    assert headings == [
        "Your answer",
        "Answer",
        "TL;DR",
        "Key points",
        "Analogy",
        "Deep dive",
        "When it doesn't apply",
        "Quick scan",
        "Side by side",
        "Real-world examples",
        "Interviewer follow-ups",
        "Red flags",
        "Sources",
    ]
    follow_ups = page.select("#follow-ups ol.follow-ups > li")
    assert [li["id"] for li in follow_ups] == ["follow-up-why-sqrt", "follow-up-flash"]
    assert all(
        li.select_one("details > summary").get_text() == "Show approach" for li in follow_ups
    )  # type: ignore[union-attr]
    assert [li["id"] for li in page.select("ul.red-flags > li")] == [
        "red-flag-sqrt-d-model",
        "red-flag-tuned",
    ]


def test_the_quiz_without_javascript_keeps_the_card_revealed(client: TestClient) -> None:
    """The plain quiz form returns the card as it was (revealed, with the answer) at the result."""
    revealed = soup_of(client.post("/cards/test-scaling/reveal", data={"answer": "root d_k"}).text)
    form = revealed.select_one("#multiple-choice form")
    assert form is not None and str(form["action"]).endswith("/choice#choice-result")
    sent = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[type=hidden]")}
    assert sent["revealed"] == "1" and sent["answer"] == "root d_k"
    page = soup_of(client.post("/cards/test-scaling/choice", data={**sent, "choice": "a"}).text)
    assert page.select_one(".your-answer .typed").get_text() == "root d_k"  # type: ignore[union-attr]
    assert page.select_one("#choice-result .notice-error") is not None
    # Asked before Reveal, it stays unrevealed, as the htmx swap would leave it.
    unrevealed = soup_of(client.post("/cards/test-scaling/choice", data={"choice": "a"}).text)
    assert unrevealed.select_one(".your-answer") is None
    assert unrevealed.select_one("#choice-result .notice-error") is not None


def test_reveal_over_htmx_returns_the_fragment(client: TestClient) -> None:
    response = client.post("/cards/test-scaling/reveal", data={"answer": "x"}, headers=HX)
    page = soup_of(response.text)
    assert page.find("html") is None
    assert page.select_one("div#practice h2#your-answer-heading") is not None


def test_correct_option_is_not_in_the_page(client: TestClient) -> None:
    page = soup_of(client.get("/cards/test-scaling").text)
    options = page.select("#multiple-choice input[type=radio]")
    assert sorted(o["value"] for o in options) == ["a", "b", "c"]  # in a shuffled order
    assert all(o.get("aria-label") for o in options)
    for attr_holder in page.select("#multiple-choice *"):
        assert not any("correct" in str(v) for v in attr_holder.attrs.values())


def option_values(client: TestClient) -> list[str]:
    page = soup_of(client.get("/cards/test-scaling").text)
    return [o["value"] for o in page.select("#multiple-choice input[type=radio]")]


def test_options_are_shuffled_per_attempt_and_stable_on_reload(client: TestClient) -> None:
    seen = []
    for _ in range(8):
        order = option_values(client)
        assert option_values(client) == order  # a reload shows the same order
        seen.append(tuple(order))
        client.post("/cards/test-scaling/choice", data={"choice": "a"}, headers=HX)
    assert len(set(seen)) > 1  # each answer starts a new attempt, in a new order


def test_wrong_option_returns_its_red_flag(client: TestClient) -> None:
    response = client.post("/cards/test-scaling/choice", data={"choice": "c"}, headers=HX)
    assert response.status_code == 200
    page = soup_of(response.text)
    notice = page.select_one(".notice-error")
    assert notice is not None
    assert notice.select_one("em").get_text() == "Saying it is tuned"  # type: ignore[union-attr]
    assert "It follows from the variance." in notice.get_text()


def test_right_option_shows_why_when_the_card_says(settings: Settings) -> None:
    card = settings.content_dir / "testdeck" / "scaling.md"
    card.write_text(
        card.read_text().replace(
            "- [x] $\\sqrt{d_k}$\n",
            "- [x] $\\sqrt{d_k}$\n\n  It undoes the growth of the variance.\n",
        )
    )
    with CSRFClient(create_app(settings)) as client:
        quiz = soup_of(client.get("/cards/test-scaling").text).select_one("#multiple-choice")
        assert quiz is not None and "undoes the growth" not in quiz.get_text()
        wrong = client.post("/cards/test-scaling/choice", data={"choice": "c"}, headers=HX)
        assert "undoes the growth" not in wrong.text
        right = client.post("/cards/test-scaling/choice", data={"choice": "b"}, headers=HX)
        notice = soup_of(right.text).select_one(".notice-success")
        assert notice is not None
        assert "It undoes the growth of the variance." in notice.get_text()


def test_right_option_confirms(client: TestClient) -> None:
    page = soup_of(client.post("/cards/test-scaling/choice", data={"choice": "b"}).text)
    notice = page.select_one("#choice-result .notice-success")
    assert notice is not None and notice.get_text(" ", strip=True).startswith("Right.")
    assert page.select_one("#choice-b")["checked"] is not None  # type: ignore[index]


def test_forged_choice_is_a_422_with_a_message(client: TestClient) -> None:
    response = client.post("/cards/test-scaling/choice", data={"choice": "z"}, headers=HX)
    assert response.status_code == 422
    assert "Pick one of the options (a, b, c)" in response.text


def test_choice_on_card_without_quiz_is_404(client: TestClient) -> None:
    response = client.post("/cards/test-other/choice", data={"choice": "a"})
    assert response.status_code == 404
    assert "no multiple-choice question" in response.text


def test_quick_scan_shows_only_the_short_sections(client: TestClient) -> None:
    page = soup_of(client.get("/cards/test-scaling", params={"view": "scan"}).text)
    headings = [h.get_text() for h in page.select("article h2")]
    assert headings == ["Answer", "TL;DR", "Key points", "Quick scan", "Red flags", "Sources"]
    assert page.select_one("textarea") is None


def test_unknown_ids_are_404_pages(client: TestClient) -> None:
    for url in ["/cards/no-such-card", "/decks/no-such-deck", "/no/such/page"]:
        response = client.get(url)
        assert response.status_code == 404, url
        page = soup_of(response.text)
        assert page.select_one("h1").get_text() == "Not found"  # type: ignore[union-attr]
    # Not Starlette's "Not Found" under the title again: what happened, in a sentence.
    message = soup_of(client.get("/nope").text).select_one(".error-message")
    assert message is not None
    assert " ".join(message.get_text().split()) == (
        "There is no page at /nope: check the address, or start from the decks."
    )


def test_an_unknown_demo_is_a_404_that_lists_the_demos(client: TestClient) -> None:
    for headers in [{}, HX]:
        response = client.get("/demos/nope", headers=headers)
        assert response.status_code == 404
        text = " ".join(soup_of(response.text).get_text().split())
        assert "There is no demo called 'nope'. The demos are score_variance, " in text


def test_pages_link_an_icon_that_is_served(client: TestClient) -> None:
    icon = soup_of(client.get("/").text).select_one("link[rel=icon]")
    assert icon is not None
    for url in [str(icon["href"]), "/favicon.ico"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["content-type"].startswith("image/svg+xml")
        assert response.text.startswith("<svg")


def test_bad_view_is_422(client: TestClient) -> None:
    assert client.get("/cards/test-scaling", params={"view": "nope"}).status_code == 422


def test_static_assets_are_cached_and_pages_compressed(client: TestClient) -> None:
    page = soup_of(client.get("/").text)
    css = page.select_one("link[rel=stylesheet]")["href"]  # type: ignore[index]
    assert "?v=" in css
    response = client.get(css)
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    card = client.get("/cards/test-scaling", headers={"Accept-Encoding": "gzip"})
    assert card.headers["content-encoding"] == "gzip"


@pytest.mark.parametrize(
    "path", ["/", "/cards/test-scaling", "/decks/testdeck", "/review", "/stats"]
)
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    got = client.get(path)
    head = client.head(path)
    assert (head.status_code, got.status_code) == (200, 200)
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


def test_head_on_a_post_only_route_is_405(client: TestClient) -> None:
    assert client.head("/review/grade").status_code == 405

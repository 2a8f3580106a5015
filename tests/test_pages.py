"""Pages through the ASGI client, parsed as HTML: what a learner sees and can do."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

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


def test_search_from_htmx_returns_only_the_results(client: TestClient) -> None:
    response = client.get("/", params={"q": "scaling"}, headers=HX)
    page = soup_of(response.text)
    assert page.find("html") is None
    assert page.select_one("#results") is not None


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
    assert headings == ["Answer", "TL;DR", "Quick scan", "Red flags", "Sources"]
    assert page.select_one("textarea") is None


def test_unknown_ids_are_404_pages(client: TestClient) -> None:
    for url in ["/cards/no-such-card", "/decks/no-such-deck", "/no/such/page"]:
        response = client.get(url)
        assert response.status_code == 404, url
        page = soup_of(response.text)
        assert page.select_one("h1").get_text() == "Not found"  # type: ignore[union-attr]


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

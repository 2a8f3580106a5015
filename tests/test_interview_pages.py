"""Mock interview pages: start, answer under the clock, grade, report; and what they refuse.

HTML is checked by parsing it (BeautifulSoup). Tests that store something run
on SQLite, and on PostgreSQL too when QUIZLAB_TEST_DATABASE_URL names one.
"""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from bs4 import BeautifulSoup, Tag
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.accounts import users as accounts
from app.settings import Settings
from app.storage.database import Database
from app.storage.models import InterviewAnswer, InterviewRound, ReviewLog
from app.web import create_app
from tests.conftest import CSRFClient

HX = {"HX-Request": "true"}
ONE_CARD = {"source": "decks", "deck": "testdeck", "minutes": "15", "mix": "harder"}
PASSWORD = "correct horse battery"


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def text_of(page: BeautifulSoup | Tag, selector: str) -> str:
    found = page.select_one(selector)
    assert found is not None, f"nothing matches {selector}"
    return found.get_text(" ", strip=True)


def start(client: TestClient, **fields: str) -> str:
    """Start a round (one card and its two follow-ups unless told); returns its address."""
    response = client.post("/interview", data={**ONE_CARD, **fields}, follow_redirects=False)
    assert response.status_code == 303, response.text
    url: str = response.headers["location"]
    assert url.startswith("/interview/")
    return url


def answer_all(client: TestClient, url: str, count: int = 3) -> None:
    for position in range(count):
        response = client.post(
            f"{url}/answer",
            data={"position": str(position), "answer": f"answer {position}", "action": "next"},
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text


GRADES = {"points-0": ["0", "1"], "coverage-1": "3", "flags-1": "tuned", "coverage-2": "0"}


def reviews(database: Database) -> int:
    with database.session() as session:
        return session.scalar(select(func.count()).select_from(ReviewLog)) or 0


def test_the_start_page_offers_decks_lengths_and_mixes(client: TestClient) -> None:
    page = soup_of(client.get("/interview").text)
    assert text_of(page, "nav a[aria-current=page]") == "Interview"
    assert [i["value"] for i in page.select("input[name=deck]")] == ["testdeck"]
    assert [i["value"] for i in page.select("input[name=source]")] == ["decks", "weakest"]
    assert [i["value"] for i in page.select("input[name=minutes]")] == ["15", "30", "45"]
    assert [i["value"] for i in page.select("input[name=mix]")] == ["mixed", "easier", "harder"]
    assert text_of(page, "#past-heading + p") == "None yet."


def test_a_bad_start_form_says_what_to_choose(client: TestClient) -> None:
    response = client.post("/interview", data={**ONE_CARD, "minutes": "20"})
    assert response.status_code == 422
    assert (
        text_of(soup_of(response.text), "#start-error")
        == "A round lasts 15, 30, 45 minutes, not 20."
    )


def test_the_question_page_shows_the_clock_and_hides_the_model_answer(client: TestClient) -> None:
    url = start(client)
    page = soup_of(client.get(url).text)
    assert text_of(page, "#interview-question") == "What do you divide Q K ⊤ by, and why?"
    assert text_of(page, ".interview-progress") == "Question 1 of up to 3"
    since, until = page.select("[data-since]"), page.select("[data-until]")
    assert len(since) == len(until) == 1
    assert text_of(page, "[data-since]") in ("0:00", "0:01")
    assert text_of(page, "[data-until]") in ("15:00", "14:59")
    assert page.select_one("[data-time-up]").has_attr("hidden")  # type: ignore[union-attr]
    box = page.select_one("textarea#interview-answer")
    assert box is not None
    assert box["hx-trigger"] == "input changed delay:1s"
    assert box["hx-post"] == f"{url}/draft" and box["hx-include"] == "closest form"
    text = page.get_text()
    assert "keep unit variance" not in text and "Unscaled scores saturate" not in text
    assert [b["value"] for b in page.select("button[name=action]")] == ["next", "save", "finish"]


def test_typed_answers_are_kept_across_reloads(db_client: TestClient) -> None:
    url = start(db_client)
    saved = db_client.post(
        f"{url}/draft", data={"position": "0", "answer": "divide by sqrt"}, headers=HX
    )
    assert saved.status_code == 200
    assert soup_of(saved.text).find("html") is None
    assert text_of(soup_of(saved.text), "#save-status").startswith("Saved at ")
    page = soup_of(db_client.get(url).text)
    assert text_of(page, "textarea#interview-answer") == "divide by sqrt"
    # Without JavaScript the Save button does the same, then shows the page again.
    response = db_client.post(
        f"{url}/answer",
        data={"position": "0", "answer": "divide by sqrt(d_k)", "action": "save"},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"] == url
    page = soup_of(db_client.get(url).text)
    assert text_of(page, "textarea#interview-answer") == "divide by sqrt(d_k)"
    assert text_of(page, ".interview-progress") == "Question 1 of up to 3"


def test_next_moves_to_the_follow_up_with_its_context(client: TestClient) -> None:
    url = start(client)
    client.post(f"{url}/answer", data={"position": "0", "answer": "a", "action": "next"})
    page = soup_of(client.get(url).text)
    assert text_of(page, ".interview-progress") == "Question 2 of up to 3"
    assert text_of(page, ".context") == "Follow-up to: What do you divide Q K ⊤ by, and why?"
    assert text_of(page, "#interview-question") == "Why the square root?"
    assert text_of(page, "textarea#interview-answer") == ""


def test_when_time_is_up_the_next_button_goes_to_grading(
    db_client: TestClient, db_settings: Settings
) -> None:
    url = start(db_client)
    database = Database(db_settings.resolved_database_url)
    try:
        with database.session() as session:
            session.execute(
                update(InterviewRound).values(ends_at=datetime.now(UTC) - timedelta(seconds=1))
            )
            session.commit()
    finally:
        database.dispose()
    page = soup_of(db_client.get(url).text)
    assert not page.select_one("[data-time-up]").has_attr("hidden")  # type: ignore[union-attr]
    assert text_of(page, "[data-until]") == "0:00"
    assert text_of(page, "button[value=next]") == "Finish and grade"
    db_client.post(f"{url}/answer", data={"position": "0", "answer": "late", "action": "next"})
    page = soup_of(db_client.get(url).text)
    assert text_of(page, "h1") == "Grade your round"
    assert len(page.select("article.interview-graded")) == 1  # the follow-ups were never asked


def test_grading_shows_each_answer_beside_its_model_and_checklists(client: TestClient) -> None:
    url = start(client)
    answer_all(client, url)
    page = soup_of(client.get(url).text)
    items = page.select("article.interview-graded")
    assert len(items) == 3
    first = items[0]
    assert text_of(first, ".your-answer .typed") == "answer 0"
    assert "keep unit variance" in text_of(first, ".model-answer")
    assert [i["name"] for i in first.select("input[type=checkbox]")] == [
        "points-0",
        "points-0",
        "points-0",
        "flags-0",
        "flags-0",
    ]
    labels = [text_of(first, f"label[for={i['id']}]") for i in first.select("input")]
    assert labels[0].startswith("Divide by") and first.select_one("label math") is not None
    assert labels[2:] == [
        "Unscaled scores saturate the softmax",
        "Dividing by d model",
        "Saying it is tuned",
    ]
    follow_up = items[1]
    radios = follow_up.select("input[type=radio]")
    assert [r["name"] for r in radios] == ["coverage-1"] * 4 and all(
        r.has_attr("required") for r in radios
    )
    assert "standard deviation grows" in text_of(follow_up, ".model-answer")


def test_grades_become_a_report_and_reviews(db_client: TestClient, db_settings: Settings) -> None:
    url = start(db_client)
    answer_all(db_client, url)
    response = db_client.post(f"{url}/grade", data=GRADES, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == url
    page = soup_of(db_client.get(url).text)
    assert text_of(page, "h1") == "Round report"
    assert text_of(page, "#round-score") == "47%"
    rows = [
        [td.get_text(strip=True) for td in tr.select("td")]
        for tr in page.select(".interview-scores tbody tr")
    ]
    assert [(row[2], row[3]) for row in rows] == [("67%", "Hard"), ("75%", "Hard"), ("0%", "Again")]
    assert "Unscaled scores saturate the softmax" in text_of(page, "#missed-heading + p + ol")
    assert text_of(page, "#flags-heading + ul") == "Saying it is tuned — The scaling factor"
    assert [a["href"] for a in page.select(".practise-next a")] == ["/cards/test-scaling"]
    database = Database(db_settings.resolved_database_url)
    try:
        assert reviews(database) == 3
        again = db_client.post(f"{url}/grade", data={**GRADES, "coverage-2": "3"})
        assert again.status_code == 409
        assert "graded already" in text_of(soup_of(again.text), ".notice")
        assert reviews(database) == 3  # no double counting
    finally:
        database.dispose()
    stats = soup_of(db_client.get("/stats").text)
    assert "1 graded round: the latest scored 47%" in text_of(stats, "#interviews-desc")
    assert stats.select_one(f".interview-rounds a[href='{url}']") is not None


def test_a_follow_up_left_ungraded_is_refused_and_nothing_is_stored(
    db_client: TestClient, db_settings: Settings
) -> None:
    url = start(db_client)
    answer_all(db_client, url)
    response = db_client.post(f"{url}/grade", data={"points-0": "0", "coverage-1": "2"})
    assert response.status_code == 422
    page = soup_of(response.text)
    assert "Question 3 (a follow-up): choose how much of the approach" in text_of(page, ".notice")
    assert text_of(page, "h1") == "Grade your round"
    database = Database(db_settings.resolved_database_url)
    try:
        assert reviews(database) == 0
    finally:
        database.dispose()


def test_a_finished_round_takes_no_more_answers(db_client: TestClient) -> None:
    url = start(db_client)
    answer_all(db_client, url)
    late = db_client.post(f"{url}/answer", data={"position": "2", "answer": "x", "action": "next"})
    assert late.status_code == 409
    assert "This round is over" in text_of(soup_of(late.text), ".notice")
    draft = db_client.post(f"{url}/draft", data={"position": "2", "answer": "x"}, headers=HX)
    assert draft.status_code == 409
    assert text_of(soup_of(draft.text), "#save-status").startswith("Not saved: This round is over")


def test_an_over_long_answer_is_refused_with_the_limit(
    db_client: TestClient, db_settings: Settings
) -> None:
    url = start(db_client)
    long = "x" * 20_001
    response = db_client.post(
        f"{url}/answer", data={"position": "0", "answer": long, "action": "save"}
    )
    assert response.status_code == 422
    assert "at most 20,000 characters; this one has 20,001" in response.text
    draft = db_client.post(f"{url}/draft", data={"position": "0", "answer": long}, headers=HX)
    assert draft.status_code == 422
    assert "at most 20,000 characters" in text_of(soup_of(draft.text), "#save-status")
    database = Database(db_settings.resolved_database_url)
    try:
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(InterviewAnswer)) == 0
    finally:
        database.dispose()


@pytest.mark.parametrize("suffix", ["", "/draft", "/answer", "/grade"])
def test_an_unknown_round_is_404(client: TestClient, suffix: str) -> None:
    url = f"/interview/{'0' * 32}{suffix}"
    response = client.get(url) if not suffix else client.post(url, data={"position": "0"})
    assert response.status_code == 404
    assert "There is no mock interview round at this address" in response.text
    assert client.get("/interview/not-a-uid").status_code == 404


# -- Accounts mode -----------------------------------------------------------------


@pytest.fixture
def two_learners(db_settings: Settings) -> Iterator[tuple[CSRFClient, CSRFClient]]:
    """An accounts-mode app with learners ann and bob, each signed in in a browser of their own."""
    app = create_app(db_settings.model_copy(update={"auth": "accounts"}))
    with CSRFClient(app) as first:
        database: Database = app.state.db
        with database.session() as session:
            for name in ("ann", "bob"):
                accounts.create_user(session, name=name, password=PASSWORD, now=accounts.now_utc())
        browsers = []
        for name in ("ann", "bob"):
            browser = CSRFClient(app)
            signed_in = browser.post(
                "/login", data={"name": name, "password": PASSWORD}, follow_redirects=False
            )
            assert signed_in.status_code == 303
            browsers.append(browser)
        yield browsers[0], browsers[1]
        assert first is not None


def test_a_round_belongs_to_its_learner(two_learners: tuple[CSRFClient, CSRFClient]) -> None:
    ann, bob = two_learners
    url = start(ann)
    assert ann.get(url).status_code == 200
    assert bob.get(url).status_code == 404
    draft = bob.post(f"{url}/draft", data={"position": "0", "answer": "mine now"}, headers=HX)
    assert draft.status_code == 404
    assert bob.post(f"{url}/grade", data=GRADES).status_code == 404
    assert "mine now" not in ann.get(url).text
    assert soup_of(bob.get("/interview").text).select(".interview-rounds") == []
    assert len(soup_of(ann.get("/interview").text).select(".interview-rounds tbody tr")) == 1
    exported = ann.get("/progress").json()["interviews"]
    assert [r["uid"] for r in exported] == [url.rsplit("/", 1)[1]]
    assert bob.get("/progress").json()["interviews"] == []

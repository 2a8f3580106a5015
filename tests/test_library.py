"""Loading a content tree: cross-file checks, last good versions, reloading while serving."""

import logging
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from app.content.library import Library, Snapshot, check_paths, display_path
from app.settings import Settings
from app.web import create_app
from tests.cardtext import GOOD_CARD, OTHER_CARD, line_of
from tests.conftest import CSRFClient


def test_loads_every_card(content_dir: Path) -> None:
    snapshot = Library(content_dir).load()
    assert sorted(snapshot.cards) == ["test-other", "test-scaling"]
    assert snapshot.all_problems() == []
    assert [deck.name for deck in snapshot.decks] == ["testdeck"]


def test_duplicate_id_across_files(content_dir: Path) -> None:
    copy = content_dir / "testdeck" / "zz-copy.md"
    copy.write_text(GOOD_CARD)
    problems = [str(p) for p in Library(content_dir).load().all_problems()]
    first = display_path(content_dir / "testdeck" / "scaling.md")
    assert problems == [
        # The page at the id serves the first file, so it says so too.
        f"{first}:2: duplicate id 'test-scaling' (also in {display_path(copy)}:2): "
        "this page shows this file",
        f"{display_path(copy)}:2: duplicate id 'test-scaling' (also in {first}:2)",
    ]


def test_link_to_missing_card(content_dir: Path) -> None:
    (content_dir / "testdeck" / "other.md").unlink()
    snapshot = Library(content_dir).load()
    path = display_path(content_dir / "testdeck" / "scaling.md")
    line = line_of(GOOD_CARD, "card:test-other")
    assert [str(p) for p in snapshot.all_problems()] == [
        f"{path}:{line}: link to card 'test-other', which does not exist"
    ]


def test_broken_edit_keeps_the_last_good_version(content_dir: Path) -> None:
    library = Library(content_dir)
    library.load()
    card_file = content_dir / "testdeck" / "other.md"
    card_file.write_text(OTHER_CARD.replace("## TL;DR", "## TLDR"))
    snapshot = library.load()
    assert snapshot.cards["test-other"].sections["TL;DR"].html  # still served
    assert [p.message for p in snapshot.problems[display_path(card_file)]] == [
        "unknown section 'TLDR': did you mean 'TL;DR'?"
    ]


def test_removed_file_disappears(content_dir: Path) -> None:
    library = Library(content_dir)
    library.load()
    (content_dir / "testdeck" / "other.md").unlink()
    (content_dir / "testdeck" / "scaling.md").write_text(
        GOOD_CARD.replace("card:test-other", "card:test-scaling")
    )
    assert library.changed()
    assert sorted(library.load().cards) == ["test-scaling"]
    assert not library.changed()


def test_a_snapshot_keeps_what_is_derived_from_it_until_the_next_load(
    content_dir: Path,
) -> None:
    library = Library(content_dir)
    first = library.load()
    built: list[int] = []

    def card_count(snapshot: Snapshot) -> int:
        built.append(id(snapshot))
        return len(snapshot.cards)

    def twice(snapshot: Snapshot) -> int:  # a build may use another derived value
        return 2 * snapshot.derived(card_count)

    assert first.derived(twice) == first.derived(twice) == 4
    assert first.derived(card_count) == 2
    second = library.load()
    assert second.derived(card_count) == 2
    assert built == [id(first), id(second)]  # once per snapshot, and new after a load
    assert first == second  # the kept values are not part of the snapshot's value


def test_check_paths_reports_only_the_requested_files(content_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "drafts" / "testdeck" / "draft.md"
    outside.parent.mkdir(parents=True)
    outside.write_text(OTHER_CARD)  # same id as a card in content/
    problems = check_paths([outside], content_dir)
    assert [p.message for p in problems] == [
        f"duplicate id 'test-other' (also in {display_path(content_dir / 'testdeck' / 'other.md')}:2)"
    ]


def test_server_loads_good_cards_and_logs_the_others(
    settings: Settings, content_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (content_dir / "testdeck" / "broken.md").write_text("no front matter\n")
    with caplog.at_level(logging.WARNING), CSRFClient(create_app(settings)) as client:
        assert client.get("/cards/test-other").status_code == 200
    assert any(
        "broken.md:1: missing front matter: the file must start with '---'" in r.getMessage()
        for r in caplog.records
    )


def test_edits_are_served_within_a_second(tmp_path: Path, content_dir: Path) -> None:
    settings = Settings(
        content_dir=content_dir,
        data_dir=tmp_path / "data",
        reload_content=True,
        reload_interval=0.2,
    )
    card_file = content_dir / "testdeck" / "other.md"
    with CSRFClient(create_app(settings)) as client:
        card_file.write_text(
            OTHER_CARD.replace("Positive and smooth.", "Always positive, and smooth.")
        )
        deadline = time.monotonic() + 1.0
        while "Always positive" not in client.post("/cards/test-other/reveal").text:
            assert time.monotonic() < deadline, "edit not served within a second"
            time.sleep(0.05)
        # A broken edit: the last good version stays, and the page shows the problem.
        broken = OTHER_CARD.replace("## TL;DR", "## TLDR")
        card_file.write_text(broken)
        deadline = time.monotonic() + 1.0
        while True:
            page = BeautifulSoup(client.get("/cards/test-other").text, "html.parser")
            problems = [li.get_text() for li in page.select(".problems li")]
            if problems:
                break
            assert time.monotonic() < deadline, "problem not shown within a second"
            time.sleep(0.05)
        line = line_of(broken, "## TLDR")
        assert any(
            p.endswith(f"other.md:{line}: unknown section 'TLDR': did you mean 'TL;DR'?")
            for p in problems
        ), problems
        assert page.select_one("h1#question").get_text() == "What is softmax?"  # type: ignore[union-attr]


def test_a_card_that_never_passed_is_a_draft_previewed_only_while_reloading(
    content_dir: Path, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    broken = OTHER_CARD.replace("id: test-other", "id: test-draft").replace("## TL;DR", "## TLDR")
    (content_dir / "testdeck" / "draft.md").write_text(broken)
    snapshot = Library(content_dir).load()
    assert "test-draft" not in snapshot.cards and snapshot.drafts["test-draft"].draft
    for reloading, status in ((True, 200), (False, 404)):
        settings = Settings(
            content_dir=content_dir,
            data_dir=tmp_path / f"data-{reloading}",
            reload_content=reloading,
        )
        with TestClient(create_app(settings)) as client:
            response = client.get("/cards/test-draft")
            assert response.status_code == status
            if reloading:
                assert "Draft: this card has not passed the check yet." in response.text
                assert (
                    "unknown section &#39;TLDR&#39;: did you mean &#39;TL;DR&#39;?" in response.text
                )
                assert "Positive and smooth." in response.text  # what parsed is shown
                home = client.get("/").text
                assert "test-draft" not in home  # never listed


def test_duplicate_id_is_named_on_the_page_that_serves_the_other_file(
    content_dir: Path, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    (content_dir / "testdeck" / "zz-copy.md").write_text(
        GOOD_CARD.replace("The scaling factor", "A copy")
    )
    settings = Settings(content_dir=content_dir, data_dir=tmp_path / "data", reload_content=True)
    with TestClient(create_app(settings)) as client:
        page = client.get("/cards/test-scaling").text
    assert "duplicate id &#39;test-scaling&#39; (also in " in page
    assert "zz-copy.md:2): this page shows this file" in page


# -- Text that looks like the renderer's own markers (#12 item 4) -------------

FORGED = GOOD_CARD.replace(
    "State it, derive it.",
    "Written out: QZSLOTLIVE0QZ, QZSLOTDEMO7QZ and QZSLOTLIVE99QZ.\n\n"
    "Measured: {live}`score_variance.variance(d_k=128, divisor=none) = 128 ± 5%`.",
)


def test_text_that_looks_like_a_slot_marker_is_only_text(content_dir: Path) -> None:
    """Once, the renderer's markers written in a card raised KeyError (``quizlab check``
    crashed, the server did not start) or turned the text into a live number."""
    (content_dir / "testdeck" / "scaling.md").write_text(FORGED)
    snapshot = Library(content_dir).load()
    assert snapshot.all_problems() == []
    examples = snapshot.cards["test-scaling"].sections["Quick scan"]
    html = str(examples.html)
    assert "QZSLOTLIVE0QZ, QZSLOTDEMO7QZ and QZSLOTLIVE99QZ" in html
    assert "Measured: 128." in html  # the one real binding, its claim as written


def test_the_server_starts_and_reloads_with_such_a_card(settings: Settings) -> None:
    card = settings.content_dir / "testdeck" / "scaling.md"
    card.write_text(FORGED)
    with CSRFClient(create_app(settings)) as client:
        page = client.get("/cards/test-scaling", params={"view": "scan"})
        assert page.status_code == 200
        assert "QZSLOTLIVE0QZ, QZSLOTDEMO7QZ" in page.text


def test_one_card_that_breaks_the_parser_never_stops_the_others(
    content_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug the checks did not foresee is that card's problem, not the whole load's."""
    from app.content import library

    parse = library.parse_card

    def fragile(text: str, path: str) -> object:
        if path.endswith("other.md"):
            raise RecursionError("maximum recursion depth exceeded")
        return parse(text, path)

    monkeypatch.setattr(library, "parse_card", fragile)
    snapshot = Library(content_dir).load()
    assert sorted(snapshot.cards) == ["test-scaling"]
    [problem] = [p for p in snapshot.all_problems() if p.path.endswith("other.md")]
    assert problem.line == 1
    assert problem.message == (
        "this card could not be read (RecursionError: maximum recursion depth exceeded); "
        "the other cards are served. Please report it with the file."
    )

"""Anki export: notes, the .apkg and the TSV file, checked by importing them into Anki itself.

The `anki` package is Anki's own collection code (a test dependency only):
what it imports, with which fields and GUIDs, and what it keeps of a
learner's reviews when a newer export arrives, is what a learner gets.
"""

import doctest
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from anki.collection import (
    Collection,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
    ImportCsvRequest,
)
from anki.import_export_pb2 import ImportResponse
from anki.notes import Note
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

import app.content.rendering
import app.export.html
from app.content.library import Library
from app.export import AnkiNote, ResultSource, anki_notes, measure, write_apkg, write_tsv
from app.export.anki import FIELDS, MODEL_ID
from app.settings import Settings
from app.storage.database import Database
from app.storage.results import DatabaseResultStore
from app.web import create_app
from tests.exportcards import MEASURED_AT, store_measurement, write_content

# Pinned: a learner's Anki history hangs on these. Changing one orphans every
# note already imported.
GUIDS = {
    "test-scaling": "I[~Jp^9oBZ",
    "test-scaling/why-sqrt": "C%+hb&J;Em",
}


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """Three cards: testdeck's two, and `numbers` with a live number, a demo and code."""
    return write_content(tmp_path / "content")


@pytest.fixture
def library(content: Path) -> Library:
    """The library over ``content``; load() again after editing a file."""
    return Library(content)


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[Collection]:
    """A new, empty Anki collection."""
    (tmp_path / "anki").mkdir()
    col = Collection(str(tmp_path / "anki" / "collection.anki2"))
    yield col
    col.close()


def notes_of(library: Library, source: ResultSource | None = None) -> dict[str, AnkiNote]:
    snapshot = library.load()
    cards = sorted(snapshot.cards.values(), key=lambda card: card.id)
    return {note.fields["Quizlab ID"]: note for note in anki_notes(cards, measure(cards, source))}


def import_package(collection: Collection, path: Path, *, with_scheduling: bool = False) -> None:
    """Import as Anki's File > Import does (by default without the package's scheduling)."""
    request = ImportAnkiPackageRequest(
        package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=with_scheduling)
    )
    collection.import_anki_package(request)


def note_by_guid(collection: Collection, guid: str) -> Note:
    [note_id] = collection.db.list("select id from notes where guid = ?", guid)
    return collection.get_note(note_id)


def test_the_note_type_and_guids_never_change() -> None:
    assert MODEL_ID == 1525504455
    assert FIELDS == (
        "Quizlab ID",
        "Question",
        "Answer",
        "TL;DR",
        "Key points",
        "Red flags",
        "Sources",
        "Live numbers",
        "Context",
        "Spare 1",
        "Spare 2",
        "Spare 3",
    )


def test_one_note_per_card_and_per_follow_up(library: Library) -> None:
    notes = notes_of(library)
    assert sorted(notes) == [
        "test-live",
        "test-live/scaled",
        "test-other",
        "test-other/why-exp",
        "test-scaling",
        "test-scaling/flash",
        "test-scaling/why-sqrt",
    ]
    for key, guid in GUIDS.items():
        assert notes[key].guid == guid
    card, follow_up = notes["test-scaling"], notes["test-scaling/why-sqrt"]
    assert card.deck == "Quizlab::testdeck"
    assert card.tags == ("testdeck", "attention", "softmax")
    assert follow_up.tags == ("testdeck", "attention", "softmax", "follow-up")
    assert notes["test-live"].tags == ("numbers", "variance", "live_numbers")
    assert "scores keep unit variance" in card.fields["Answer"]
    assert card.fields["Key points"] == "<p>State it, derive it.</p>\n"
    assert "<strong>Saying it is tuned</strong>" in card.fields["Red flags"]
    assert "arXiv:1706.03762" in card.fields["Sources"]
    assert "Footnote 4 of the paper." in card.fields["Sources"]
    assert follow_up.fields["Question"] == "Why the square root?"
    assert "standard deviation grows" in follow_up.fields["Answer"]
    assert follow_up.fields["Context"].startswith("Follow-up to The scaling factor: What do you")
    assert all(note.fields[f"Spare {n}"] == "" for note in notes.values() for n in (1, 2, 3))


def test_formulas_are_tex_for_anki_mathjax_and_code_is_coloured_inline(library: Library) -> None:
    notes = notes_of(library)
    card = notes["test-scaling"]
    assert card.fields["Question"] == "What do you divide \\(QK^\\top\\) by, and why?"
    assert "\\(\\sqrt{d_k}\\)" in card.fields["Answer"]
    assert not any("<math" in field for note in notes.values() for field in note.fields.values())
    approach = notes["test-live/scaled"].fields["Answer"]
    assert '<pre style="background:#f8f8f8' in approach
    assert '<span style="color: #008000; font-weight: bold">' not in approach  # no keyword there
    assert '<span style="color: #666">@</span>' in approach  # the operator, coloured
    assert "<span class=" not in approach.split("<pre", 1)[1]
    # A link to another card has no address inside Anki: its text stays.
    assert notes["test-live"].fields["TL;DR"].endswith("see the scaling card.</p>\n")


def test_a_card_edited_after_loading_is_exported_as_loaded(library: Library, content: Path) -> None:
    card = library.load().cards["test-other"]
    card_file = content / "testdeck" / "other.md"
    card_file.write_text(card_file.read_text().replace("A normalised exponential.", "Changed."))
    [note, _follow_up] = anki_notes([card], measure([card], None))
    assert "A normalised exponential." in note.fields["Answer"]


def test_live_numbers_are_the_last_measured_values(library: Library, database: Database) -> None:
    before = notes_of(library, DatabaseResultStore(database))["test-live"]
    assert before.fields["Live numbers"] == (
        "<ul><li>11.31 ± 3%: not measured yet (score_variance.std(d_k=128, divisor=none))</li>"
        "<li>1 ± 3%: not measured yet (score_variance.std(d_k=128, divisor=sqrt_dk))</li></ul>"
    )
    store_measurement(database, {"std": 11.2718, "variance": 127.05})
    notes = notes_of(library, DatabaseResultStore(database))
    assert (
        notes["test-live"]
        .fields["Live numbers"]
        .startswith(
            "<ul><li>11.31 ± 3%: checked, measured 11.2718 by "
            "score_variance.std(d_k=128, divisor=none) on 2026-05-04</li>"
        )
    )
    # The claim in the text stays as written; the follow-up lists only its own number.
    assert '<span class="live">11.31</span>' in notes["test-live"].fields["Answer"]
    assert "divisor=sqrt_dk" in notes["test-live/scaled"].fields["Live numbers"]
    assert "divisor=none" not in notes["test-live/scaled"].fields["Live numbers"]


def test_a_note_is_modified_when_its_card_file_or_newest_measurement_is(
    library: Library, content: Path, database: Database
) -> None:
    card_file = content / "numbers" / "live.md"
    os.utime(card_file, (1_700_000_000, 1_700_000_000))
    assert notes_of(library)["test-live"].modified == 1_700_000_000
    store_measurement(database, {"std": 11.2718})
    measured = notes_of(library, DatabaseResultStore(database))
    assert measured["test-live"].modified == int(MEASURED_AT.timestamp())
    assert measured["test-live/scaled"].modified == int(MEASURED_AT.timestamp())


def test_the_package_imports_into_anki_with_every_field_guid_and_tag(
    library: Library, collection: Collection, tmp_path: Path
) -> None:
    notes = notes_of(library)
    write_apkg(list(notes.values()), tmp_path / "quizlab.apkg")
    import_package(collection, tmp_path / "quizlab.apkg")

    assert collection.note_count() == len(notes) == 7
    assert sorted(collection.decks.all_names()) == sorted(
        ["Default", "Quizlab", "Quizlab::numbers", "Quizlab::testdeck"]
    )
    for note in notes.values():
        imported = note_by_guid(collection, note.guid)
        assert imported.note_type()["name"] == "Quizlab"
        assert imported.note_type()["id"] == MODEL_ID
        assert dict(imported.items()) == note.fields
        assert sorted(imported.tags) == sorted(note.tags)
        assert imported.mod == note.modified
    # One card per note, rendered by Anki: question on the front, answer and parts on the back.
    card = collection.get_note(collection.find_notes('"Quizlab ID:test-scaling"')[0]).cards()[0]
    assert "\\(QK^\\top\\)" in card.question()
    assert "<h3>Red flags</h3>" in card.answer()
    assert "<h3>Live numbers</h3>" not in card.answer()  # empty parts leave no heading


@pytest.mark.parametrize("with_scheduling", [False, True], ids=["plain", "with-scheduling"])
def test_a_reexport_after_an_edit_updates_notes_in_place_and_keeps_their_reviews(
    library: Library, content: Path, collection: Collection, tmp_path: Path, with_scheduling: bool
) -> None:
    card_file = content / "testdeck" / "scaling.md"
    os.utime(card_file, (1_700_000_000, 1_700_000_000))
    write_apkg(list(notes_of(library).values()), tmp_path / "first.apkg")
    import_package(collection, tmp_path / "first.apkg", with_scheduling=with_scheduling)
    [note_id] = collection.find_notes('"Quizlab ID:test-scaling"')
    [anki_card] = collection.get_note(note_id).cards()
    anki_card.start_timer()
    collection.sched.answerCard(anki_card, 3)  # Good: the learner reviews the card in Anki

    # The author rewrites the answer and a follow-up, a day later.
    text = card_file.read_text()
    text = text.replace("so the scores keep unit variance", "so each score has variance 1")
    text = text.replace("Because the standard deviation", "Since the standard deviation")
    card_file.write_text(text)
    os.utime(card_file, (1_700_086_400, 1_700_086_400))
    second = notes_of(library)
    assert second["test-scaling"].guid == GUIDS["test-scaling"]
    assert second["test-scaling/why-sqrt"].guid == GUIDS["test-scaling/why-sqrt"]
    write_apkg(list(second.values()), tmp_path / "second.apkg")
    import_package(collection, tmp_path / "second.apkg", with_scheduling=with_scheduling)

    assert collection.note_count() == 7  # updated, not duplicated
    note = collection.get_note(note_id)
    assert "so each score has variance 1" in note["Answer"]
    assert note.mod == 1_700_086_400
    follow_up = note_by_guid(collection, GUIDS["test-scaling/why-sqrt"])
    assert "Since the standard deviation" in follow_up["Answer"]
    # The review history and the schedule it gave are still there.
    reviewed = collection.get_card(anki_card.id)
    assert reviewed.reps == 1
    assert reviewed.type != 0  # no longer new
    revlog = collection.db.list("select cid from revlog")
    assert revlog == [anki_card.id]


def test_the_tsv_file_has_anki_headers_and_updates_by_guid(
    library: Library, content: Path, collection: Collection, tmp_path: Path
) -> None:
    out = tmp_path / "quizlab.tsv"
    notes = notes_of(library)
    write_tsv(list(notes.values()), out)
    lines = out.read_text().splitlines()
    assert lines[:6] == [
        "#separator:tab",
        "#html:true",
        "#guid column:1",
        "#deck column:2",
        "#tags column:3",
        "#columns:GUID\tDeck\tTags\tFront\tBack",
    ]

    def import_tsv() -> ImportResponse.Log:
        metadata = collection.get_csv_metadata(str(out), None)
        return collection.import_csv(ImportCsvRequest(path=str(out), metadata=metadata)).log

    first = import_tsv()
    assert len(first.new) == 7
    imported = note_by_guid(collection, GUIDS["test-scaling"])
    assert imported.note_type()["name"] == "Basic"
    assert "\\(QK^\\top\\)" in imported["Front"]
    assert "<h3>Red flags</h3>" in imported["Back"]
    assert sorted(imported.tags) == ["attention", "softmax", "testdeck"]

    card_file = content / "testdeck" / "scaling.md"
    card_file.write_text(card_file.read_text().replace("unit variance", "variance one"))
    write_tsv(list(notes_of(library).values()), out)
    second = import_tsv()
    assert len(second.new) == 0 and len(second.updated) == 1
    assert collection.note_count() == 7
    assert "variance one" in note_by_guid(collection, GUIDS["test-scaling"])["Back"]


# -- The download link on the deck page.


@pytest.fixture
def export_client(tmp_path: Path, content: Path) -> Iterator[TestClient]:
    """The app on the export test content, with a data folder of its own."""
    settings = Settings(content_dir=content, data_dir=tmp_path / "data", reload_content=False)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_the_deck_page_links_its_anki_package(export_client: TestClient) -> None:
    page = BeautifulSoup(export_client.get("/decks/testdeck").text, "html.parser")
    link = page.select_one("main a[download]")
    assert link is not None and link["href"] == "/decks/testdeck.apkg"
    assert link.get_text() == "Download the deck for Anki"


def test_the_package_is_built_once_and_again_after_an_edit(
    export_client: TestClient, content: Path, tmp_path: Path, collection: Collection
) -> None:
    response = export_client.get("/decks/testdeck.apkg")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="quizlab-testdeck.apkg"'
    (tmp_path / "download.apkg").write_bytes(response.content)
    assert "collection.anki2" in zipfile.ZipFile(tmp_path / "download.apkg").namelist()
    import_package(collection, tmp_path / "download.apkg")
    assert collection.note_count() == 5  # testdeck only: 2 cards, 3 follow-ups

    kept = list((tmp_path / "data" / "exports" / "testdeck").glob("*.apkg"))
    assert len(kept) == 1
    built = kept[0].stat().st_mtime_ns
    assert export_client.get("/decks/testdeck.apkg").content == response.content
    assert kept[0].stat().st_mtime_ns == built  # served from the cache, not rebuilt

    card_file = content / "testdeck" / "other.md"
    card_file.write_text(card_file.read_text().replace("Exp, then normalise.", "Exponentiate."))
    export_client.app.state.library.load()
    assert export_client.get("/decks/testdeck.apkg").content != response.content
    [rebuilt] = (tmp_path / "data" / "exports" / "testdeck").glob("*.apkg")
    assert rebuilt != kept[0]  # a new name for new content; the old package is gone


def test_a_missing_deck_has_no_package(export_client: TestClient) -> None:
    response = export_client.get("/decks/nothing.apkg")
    assert response.status_code == 404
    page = BeautifulSoup(response.text, "html.parser")
    assert "There is no deck called 'nothing'." in page.get_text()


@pytest.mark.parametrize("module", [app.export.html, app.content.rendering])
def test_docstring_examples_run(module: object) -> None:
    failures, _tried = doctest.testmod(module)
    assert failures == 0

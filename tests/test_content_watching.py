"""Reloading cheaply: only changed files are parsed, parses survive a restart, edits are noticed."""

import asyncio
import logging
from pathlib import Path

import pytest

from app.content import library as library_module
from app.content import parsecache
from app.content.library import Library, Snapshot
from app.content.watching import is_card_file, watch
from tests.cardtext import GOOD_CARD, OTHER_CARD
from tests.worker.test_runner import run_in_fresh_loop


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every card file the library parses, in order."""
    seen: list[str] = []
    real = library_module.parse_card

    def counting(text: str, path: str) -> object:
        seen.append(Path(path).name)
        return real(text, path)

    monkeypatch.setattr(library_module, "parse_card", counting)
    return seen


def test_update_reparses_only_the_files_reported(content_dir: Path, parses: list[str]) -> None:
    library = Library(content_dir)
    loaded = library.load()
    before, kept = loaded.cards["test-other"], loaded.cards["test-scaling"]
    parses.clear()
    other = content_dir / "testdeck" / "other.md"
    other.write_text(OTHER_CARD.replace("Positive and smooth.", "Always positive."))
    snapshot = library.update([other])
    assert parses == ["other.md"]
    assert snapshot.cards["test-other"] is not before
    assert snapshot.cards["test-scaling"] is kept


def test_update_of_a_removed_file_drops_its_card_and_checks_links(content_dir: Path) -> None:
    library = Library(content_dir)
    library.load()
    other = content_dir / "testdeck" / "other.md"
    other.unlink()
    snapshot = library.update([other])
    assert sorted(snapshot.cards) == ["test-scaling"]
    assert any("link to card 'test-other'" in str(p) for p in snapshot.all_problems())


def test_update_of_a_folder_rescans_everything(content_dir: Path) -> None:
    library = Library(content_dir)
    library.load()
    deck = content_dir / "testdeck"
    for card in deck.iterdir():
        card.unlink()
    deck.rmdir()
    assert library.update([deck]).cards == {}


def test_a_restart_reads_parsed_cards_from_the_disk_cache(
    content_dir: Path, tmp_path: Path, parses: list[str]
) -> None:
    cache = tmp_path / "data" / "cache" / "cards"
    first = Library(content_dir, cache_dir=cache).load()
    assert sorted(parses) == ["other.md", "scaling.md"]
    parses.clear()
    again = Library(content_dir, cache_dir=cache).load()
    assert parses == []
    assert sorted(again.cards) == sorted(first.cards)
    assert again.cards["test-scaling"].content_hash == first.cards["test-scaling"].content_hash
    # An edit is a new key: that one file is parsed, and its old entry removed.
    (content_dir / "testdeck" / "other.md").write_text(OTHER_CARD + "\n")
    Library(content_dir, cache_dir=cache).load()
    assert parses == ["other.md"]
    assert len(list((cache / parsecache.parser_version()).glob("*.pickle"))) == 2


def test_new_parser_code_ignores_and_removes_old_entries(
    content_dir: Path, tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    Library(content_dir, cache_dir=cache).load()
    old = cache / parsecache.parser_version()
    parses.clear()
    monkeypatch.setattr(parsecache, "parser_version", lambda: "another-version")
    Library(content_dir, cache_dir=cache).load()
    assert sorted(parses) == ["other.md", "scaling.md"]
    assert not old.exists()
    assert (cache / "another-version").is_dir()


def test_watch_filter_keeps_card_files_folders_and_deletions(tmp_path: Path) -> None:
    import watchfiles

    assert is_card_file(watchfiles.Change.modified, "/c/deck/card.md")
    assert not is_card_file(watchfiles.Change.modified, "/c/deck/.card.md.swp")
    assert not is_card_file(watchfiles.Change.added, "/c/deck/notes.txt")
    assert is_card_file(watchfiles.Change.deleted, "/c/deck")
    assert is_card_file(watchfiles.Change.added, str(tmp_path))  # a deck copied in


@pytest.mark.parametrize("force_polling", ["", "true"])
def test_watch_reports_an_edit_and_says_how_it_watches(
    content_dir: Path,
    parses: list[str],
    force_polling: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", force_polling)
    library = Library(content_dir)
    library.load()
    parses.clear()
    reloads: list[Snapshot] = []

    async def scenario() -> None:
        task = asyncio.create_task(watch(library, 0.1, reloads.append))
        # Saved again every half second: a loaded machine may set the watcher up late.
        for attempt in range(1, 21):
            await asyncio.sleep(0.5)
            if reloads:
                break
            (content_dir / "testdeck" / "scaling.md").write_text(GOOD_CARD + "\n" * attempt)
        task.cancel()

    with caplog.at_level(logging.INFO, logger="app.content.watching"):
        run_in_fresh_loop(scenario())
    assert reloads, "the edit was not noticed within 10 s"
    assert set(parses) == {"scaling.md"}
    expected = "scanning every 0.1 s" if force_polling else "OS file notifications"
    assert any(expected in record.getMessage() for record in caplog.records)

"""A deck's Anki package for the web's download link: built on first request, then kept.

A package is kept under a name made from everything that goes into it (the
deck's cards by content hash, the live numbers shown, the export's format),
so an edited card or a new measurement gives a new file and an unchanged deck
is never built twice. Only a deck's newest package is kept.
"""

import hashlib
import os
import uuid
from pathlib import Path

from app.content.library import Deck
from app.export.anki import anki_notes, write_apkg
from app.export.measured import ResultSource, measure

# Bump when the same cards start giving other notes (new fields filled, new HTML).
FORMAT = "1"


def package_key(deck: Deck, fingerprint: str) -> str:
    parts = [FORMAT, deck.name, fingerprint]
    parts += [f"{card.id}:{card.content_hash}" for card in deck.cards]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def deck_package(deck: Deck, *, folder: Path, source: ResultSource | None) -> Path:
    """The path of the deck's ``.apkg`` under ``folder``, writing it first if needed.

    Blocking (file writes, a database query): call it from a thread. Two calls
    at once may both build the package; each writes its own file and renames
    it into place, so a reader never sees half a file.
    """
    measured = measure(deck.cards, source)
    home = folder / deck.name
    path = home / f"{package_key(deck, measured.fingerprint())}.apkg"
    if path.is_file():
        return path
    home.mkdir(parents=True, exist_ok=True)
    partial = home / f".{uuid.uuid4().hex}.partial"
    try:
        write_apkg(anki_notes(deck.cards, measured), partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    for old in home.glob("*.apkg"):
        if old != path:
            old.unlink(missing_ok=True)
    return path

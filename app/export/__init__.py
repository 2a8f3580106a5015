"""Export: decks to take away, as Anki notes (``.apkg`` or TSV) or a static site.

:mod:`app.export.anki` writes notes of one frozen note type whose GUIDs come
from card ids, so a re-export updates an Anki collection in place;
:mod:`app.export.site` writes a read-only copy of the decks that opens from
any folder; :mod:`app.export.measured` reads the live numbers' last stored
results for both; :mod:`app.export.cache` keeps a deck's package for the
web's download link.

May import: :mod:`app.content`, :mod:`app.demos`, :mod:`app.live` and
:mod:`app.storage` (stored demo results). Never the web or the CLI
(tests/test_architecture.py).
"""

from app.export.anki import AnkiNote, anki_notes, write_apkg, write_tsv
from app.export.cache import deck_package
from app.export.decks import UnknownDeck, choose_decks
from app.export.measured import Measured, ResultSource, measure
from app.export.site import SiteError, SiteReport, write_site

__all__ = [
    "AnkiNote",
    "Measured",
    "ResultSource",
    "SiteError",
    "SiteReport",
    "UnknownDeck",
    "anki_notes",
    "choose_decks",
    "deck_package",
    "measure",
    "write_apkg",
    "write_site",
    "write_tsv",
]

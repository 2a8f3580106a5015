"""A deck: its cards with difficulty and minutes, and the deck as an Anki package."""

import asyncio

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

from app.content.library import Deck, Snapshot
from app.export import deck_package
from app.settings import Settings
from app.storage.results import DatabaseResultStore
from app.web.deps import SnapshotDep
from app.web.responses import pages
from app.web.templating import templates

router = APIRouter()
# No registered type for .apkg; Anki's own downloads (AnkiWeb) use this one.
APKG_MEDIA_TYPE = "application/octet-stream"


def _deck(snapshot: Snapshot, deck_name: str) -> Deck:
    found = snapshot.deck(deck_name)
    if found is None:
        raise HTTPException(404, f"There is no deck called '{deck_name}'.")
    return found


# Declared before /decks/{deck_name}, which would otherwise take "attention.apkg" as a name.
@router.get(
    "/decks/{deck_name}.apkg", response_class=FileResponse, name="deck_apkg", responses=pages(404)
)
async def deck_apkg(request: Request, deck_name: str, snapshot: SnapshotDep) -> FileResponse:
    """The deck for Anki, built on first request and kept until a card or live number changes."""
    found = _deck(snapshot, deck_name)
    settings: Settings = request.app.state.settings
    path = await asyncio.to_thread(
        deck_package,
        found,
        folder=settings.data_dir / "exports",
        source=DatabaseResultStore(request.app.state.db),
    )
    return FileResponse(path, media_type=APKG_MEDIA_TYPE, filename=f"quizlab-{found.name}.apkg")


@router.get("/decks/{deck_name}", response_class=HTMLResponse, name="deck", responses=pages(404))
async def deck(request: Request, deck_name: str, snapshot: SnapshotDep) -> HTMLResponse:
    found = _deck(snapshot, deck_name)
    return templates.TemplateResponse(request, "deck.html", {"deck": found})

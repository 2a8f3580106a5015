"""A deck: its cards with difficulty and minutes."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.web.deps import SnapshotDep
from app.web.responses import pages
from app.web.templating import templates

router = APIRouter()


@router.get("/decks/{deck_name}", response_class=HTMLResponse, name="deck", responses=pages(404))
async def deck(request: Request, deck_name: str, snapshot: SnapshotDep) -> HTMLResponse:
    found = snapshot.deck(deck_name)
    if found is None:
        raise HTTPException(404, f"There is no deck called '{deck_name}'.")
    return templates.TemplateResponse(request, "deck.html", {"deck": found})

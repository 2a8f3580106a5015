"""Home: the decks, and search as you type."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.web.deps import SnapshotDep
from app.web.render import render

router = APIRouter()


@router.get("/", response_class=HTMLResponse, name="home")
async def home(
    request: Request,
    snapshot: SnapshotDep,
    q: Annotated[str, Query(max_length=200)] = "",
) -> HTMLResponse:
    query = q.strip()
    context = {
        "decks": snapshot.decks,
        "query": query,
        "results": snapshot.search(query) if query else None,
        "card_count": len(snapshot.cards),
    }
    return render(request, "home.html", context, fragment="_search_results.html")

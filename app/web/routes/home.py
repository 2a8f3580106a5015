"""Home: the decks, and search as you type."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, HTMLResponse

from app.content.search import search
from app.web.deps import SnapshotDep
from app.web.render import render
from app.web.templating import STATIC_DIR

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
        "results": search(snapshot.cards.values(), query) if query else None,
        "card_count": len(snapshot.cards),
    }
    # One URL, two bodies: render() sends Vary: HX-Request, so Back to a search
    # URL never shows the cached results alone as the page.
    return render(request, "home.html", context, fragment="_search_results.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    """The site's icon, for clients that ask for /favicon.ico instead of reading the page's link."""
    return FileResponse(
        STATIC_DIR / "favicon.svg",
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )

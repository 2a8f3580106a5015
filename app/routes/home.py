"""Home: the decks, and search as you type."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, HTMLResponse

from app.routes.deps import HtmxDep, SnapshotDep
from app.search import search
from app.templating import STATIC_DIR, templates

router = APIRouter()


@router.get("/", response_class=HTMLResponse, name="home")
async def home(
    request: Request,
    snapshot: SnapshotDep,
    htmx: HtmxDep,
    q: Annotated[str, Query(max_length=200)] = "",
) -> HTMLResponse:
    query = q.strip()
    context = {
        "decks": snapshot.decks,
        "query": query,
        "results": search(snapshot.cards.values(), query) if query else None,
        "card_count": len(snapshot.cards),
    }
    template = "_search_results.html" if htmx else "home.html"
    response = templates.TemplateResponse(request, template, context)
    # One URL, two bodies: the results alone for htmx, the page otherwise. Back to
    # a search URL must not show the cached results alone as the page.
    response.headers["Vary"] = "HX-Request"
    return response


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    """The site's icon, for clients that ask for /favicon.ico instead of reading the page's link."""
    return FileResponse(
        STATIC_DIR / "favicon.svg",
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )

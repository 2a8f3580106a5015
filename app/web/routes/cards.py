"""The card page: practise a question, reveal, answer the multiple choice."""

import asyncio
from collections.abc import Hashable
from typing import Annotated, Literal

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from app.content.card import Card, Problem, content_hash
from app.content.library import Snapshot
from app.live.results import LiveResults, demo_views
from app.practice import MAX_ANSWER_LENGTH
from app.practice.progress import record_choice
from app.web.deps import CardDep, LearnerDep, LiveDep, SessionDep, SnapshotDep, get_card
from app.web.middleware import csrf
from app.web.middleware.sessions import session_of
from app.web.pagecache import Page, PageCache
from app.web.render import render
from app.web.templating import templates

router = APIRouter()


def preview_state(card: Card, problems: list[Problem]) -> str:
    """Changes whenever the card or its file's problems change."""
    return content_hash(card.content_hash + "".join(str(p) for p in problems))[:16]


def _context(
    card: Card, snapshot: Snapshot, live: LiveResults, *, preview: bool = False, **extra: object
) -> dict[str, object]:
    """What card.html and its partials need.

    ``preview``: the page was opened for live preview (``?preview=1``). Only
    then, and only while content reloading is on, does it poll for edits; a
    page opened without it offers a link instead, so open tabs of a running
    site cost the server nothing (docs/performance.md).
    """
    measurements = live.measurements(card)
    problems = snapshot.problems.get(card.path, [])
    polling = snapshot.reloading and preview
    return {
        "card": card,
        "problems": problems,
        "preview_state": preview_state(card, problems) if polling else None,
        "preview_offer": snapshot.reloading and not preview,
        "measurements": measurements,
        "live_pending": any(m.status == "pending" for m in measurements.values()),
        "demo_views": demo_views(live, card),
        "view": "practice",
        "revealed": False,
        "typed_answer": "",
        "choice_result": None,
        **extra,
    }


VIEWS = ("practice", "scan")
# What pydantic reads as a boolean query value (true/false, 1/0, yes/no, on/off).
TRUE, FALSE = ("1", "true", "yes", "on", "t", "y"), ("0", "false", "no", "off", "f", "n", "")


def _query(params: QueryParams) -> tuple[str, bool]:
    """``view`` and ``preview`` from the query string, checked as FastAPI would."""
    view = params.get("view", "practice")
    if view not in VIEWS:
        raise HTTPException(422, "view: Input should be 'practice' or 'scan'.")
    preview = params.get("preview", "").lower()
    if preview not in TRUE + FALSE:
        raise HTTPException(422, "preview: Input should be a valid boolean.")
    return view, preview in TRUE


def _page_key(
    snapshot: Snapshot, live: LiveResults, card: Card, view: str, preview: bool
) -> Hashable:
    """Everything a rendered card page depends on (app.web.pagecache)."""
    problems = tuple(snapshot.problems.get(card.path, ()))
    return (card, view, preview, problems, live.signature(card), snapshot.reloading)


async def card_page(request: Request) -> Response:
    """``GET /cards/{card_id}[?view=scan][&preview=1]``: the card, from the page cache.

    The busiest page, so a plain Starlette endpoint: it reads the two query
    values and app state itself, since FastAPI's parameter and dependency
    resolution costs more than sending a cached page (docs/performance.md).
    """
    card_id: str = request.path_params["card_id"]
    view, preview = _query(request.query_params)
    snapshot: Snapshot = request.app.state.library.snapshot
    live: LiveResults = request.app.state.live
    cache: PageCache = request.app.state.page_cache
    card = await get_card(card_id, snapshot)
    key = _page_key(snapshot, live, card, view, preview)
    page = cache.get(key)
    if page is None:
        # Cached pages are the same for everyone: rendered with a placeholder
        # where the session's CSRF token goes, swapped in below (app.web.middleware.csrf).
        request.scope[csrf.RENDER_KEY] = csrf.PLACEHOLDER
        response = templates.TemplateResponse(
            request, "card.html", _context(card, snapshot, live, preview=preview, view=view)
        )
        del request.scope[csrf.RENDER_KEY]
        page = Page.build(bytes(response.body), csrf.PLACEHOLDER.encode())
        cache.put(key, page)
    return _send(page, request.scope)


class CachedCardPages:
    """Sends a card page that is already in the page cache before routing.

    Innermost of the middleware (after the session, the CSRF check and, in
    accounts mode, sign-in), so nothing it skips guards anything: only
    FastAPI's routing and exception layers, a quarter of a cached page's time
    (docs/performance.md). Anything else, a miss included, goes on to
    :func:`card_page`, which renders the page and fills the cache.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            page = _cached(scope)
            if page is not None:
                await _send(page, scope)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _cached(scope: Scope) -> Page | None:
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if not path.startswith("/cards/"):
        return None
    card_id = path[len("/cards/") :]
    state = scope["app"].state
    snapshot: Snapshot = state.library.snapshot
    card = snapshot.cards.get(card_id)  # an id never contains "/"
    if card is None:
        return None
    try:
        view, preview = _query(QueryParams(scope["query_string"]))
    except HTTPException:
        return None
    page: Page | None = state.page_cache.get(_page_key(snapshot, state.live, card, view, preview))
    return page


def _send(page: Page, scope: Scope) -> Response:
    """The page with the session's token: gzipped if the client accepts it, 304 if unchanged."""
    token = session_of(scope).csrf.encode()
    accept_encoding = b""
    if_none_match = b""
    for name, value in scope["headers"]:
        if name == b"accept-encoding":
            accept_encoding = value
        elif name == b"if-none-match":
            if_none_match = value
    gzip = b"gzip" in accept_encoding
    etag = page.etag(token, "gzip" if gzip else "identity")
    headers = {"ETag": etag, "Vary": "Accept-Encoding"}
    if if_none_match and etag.encode() in if_none_match:
        return Response(status_code=304, headers=headers)
    body = page.personalised(token)
    if gzip:
        body = page.gzip(token, body)
        headers["Content-Encoding"] = "gzip"
    return Response(body, headers=headers, media_type="text/html")


router.add_route("/cards/{card_id}", card_page, methods=["GET"], name="card")


@router.post("/cards/{card_id}/reveal", response_class=HTMLResponse, name="reveal")
async def reveal(
    request: Request,
    card: CardDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    answer: Annotated[str, Form(max_length=MAX_ANSWER_LENGTH)] = "",
) -> HTMLResponse:
    context = _context(card, snapshot, live, revealed=True, typed_answer=answer)
    return render(request, "card.html", context, fragment="_practice.html")


@router.post("/cards/{card_id}/choice", response_class=HTMLResponse, name="choice")
async def choose(
    request: Request,
    card: CardDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    session: SessionDep,
    learner: LearnerDep,
    choice: Annotated[str, Form(max_length=8)] = "",
) -> HTMLResponse:
    quiz = card.multiple_choice
    if quiz is None:
        raise HTTPException(404, "This card has no multiple-choice question.")
    picked = quiz.choice(choice)
    if picked is None:
        keys = ", ".join(c.key for c in quiz.choices)
        raise HTTPException(422, f"Pick one of the options ({keys}) before checking.")
    await asyncio.to_thread(record_choice, session, learner, card_id=card.id, choice=picked)
    result = {
        "choice": picked,
        "correct": picked.correct,
        "red_flag": card.red_flag(picked.flag) if picked.flag else None,
    }
    context = _context(card, snapshot, live, choice_result=result)
    return render(request, "card.html", context, fragment="_choice_result.html")


@router.get("/cards/{card_id}/preview", response_class=HTMLResponse, name="card_preview")
async def card_preview(
    request: Request,
    card: CardDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    since: Annotated[str, Query(max_length=64)] = "",
    view: Annotated[Literal["practice", "scan"], Query()] = "practice",
    revealed: Annotated[bool, Query()] = False,
    answer: Annotated[str, Query(max_length=MAX_ANSWER_LENGTH)] = "",
) -> Response:
    """The card re-rendered when its file changed since ``since``; 204 while it has not.

    Polled every second by a card page opened with ``?preview=1`` while
    content reloading is on, so an author sees each save (and its check
    problems) without reloading.
    """
    problems = snapshot.problems.get(card.path, [])
    if not snapshot.reloading or preview_state(card, problems) == since:
        return Response(status_code=204)
    context = _context(
        card, snapshot, live, preview=True, view=view, revealed=revealed, typed_answer=answer
    )
    return templates.TemplateResponse(request, "_card_article.html", context)

"""The card page: practise a question, reveal, answer the multiple choice."""

import asyncio
from collections.abc import Hashable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from app.content.card import Card, Choice, Problem, content_hash
from app.content.library import Snapshot
from app.live.client import WorkerError
from app.live.results import LiveResults, Measurement, demo_views
from app.practice import MAX_ANSWER_LENGTH
from app.practice.progress import record_choice
from app.web.deps import CardDep, HtmxDep, LearnerDep, LiveDep, SessionDep, SnapshotDep, get_card
from app.web.middleware import csrf
from app.web.middleware.sessions import session_of
from app.web.pagecache import Page, PageCache
from app.web.render import render
from app.web.responses import UNSAFE, pages
from app.web.templating import templates

router = APIRouter()


def preview_state(card: Card, problems: list[Problem]) -> str:
    """Changes whenever the card or its file's problems change."""
    return content_hash(card.content_hash + "".join(str(p) for p in problems))[:16]


def option_order(card: Card, request: Request | Scope) -> tuple[Choice, ...]:
    """The card's options as this learner sees them on this attempt.

    Seeded by who asks (the account, else the session) and how many answers the
    session has given: fixed across reloads, new after each answer.
    """
    if card.multiple_choice is None:
        return ()
    session = session_of(request.scope if isinstance(request, Request) else request)
    who = session.get("u") or session.csrf
    return card.multiple_choice.shuffled(f"{who}:{card.id}:{session.get('m', 0)}")


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
        "options": card.multiple_choice.choices if card.multiple_choice else (),
        "problems": problems,
        "preview_state": preview_state(card, problems) if polling else None,
        "preview_offer": snapshot.reloading and not preview,
        "measurements": measurements,
        "live_pending": any(m.status == "pending" for m in measurements.values()),
        "demo_views": demo_views(live, card),
        "view": "practice",
        "revealed": card.draft,  # a draft shows every section that parsed
        "typed_answer": "",
        "choice_result": None,
        **extra,
    }


async def _run_everything(
    live: LiveResults, card: Card
) -> tuple[dict[int, Measurement], dict[str, str]]:
    """Every live number's badge, with each demo's result in the cache or why it failed."""
    errors: dict[str, str] = {}

    async def demo(slot: str, name: str, params: dict[str, Any]) -> None:
        try:
            await live.result(name, params, persist=False)
        except (WorkerError, ValueError) as exc:
            errors[slot] = str(exc)

    views = demo_views(live, card)
    runs = [demo(v.slot, v.spec.name, v.params) for v in views.values() if v.result is None]
    measurements = asyncio.ensure_future(live.check(card))
    await asyncio.gather(measurements, *runs)
    return measurements.result(), errors


async def _complete(
    card: Card, snapshot: Snapshot, live: LiveResults, **extra: object
) -> dict[str, object]:
    """The context of a whole card page with every live number and demo run first.

    For a browser without JavaScript (a plain form post, or the <noscript>
    refresh of a card page): it cannot ask for them after the page loads.
    Each run is bounded by the worker timeout; one that fails says why.
    """
    measurements, errors = await _run_everything(live, card)
    context = _context(card, snapshot, live)
    context.update(measurements=measurements, live_pending=False, demo_errors=errors, **extra)
    return context


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
    snapshot: Snapshot,
    live: LiveResults,
    card: Card,
    view: str,
    preview: bool,
    options: tuple[Choice, ...],
) -> Hashable:
    """Everything a rendered card page depends on (app.web.pagecache).

    The options' order is in it: one cached version per order, shared by
    every learner who sees that order.
    """
    problems = tuple(snapshot.problems.get(card.path, ()))
    order = tuple(option.key for option in options)
    return (card, view, preview, problems, live.signature(card), snapshot.reloading, order)


async def card_page(request: Request) -> Response:
    """``GET /cards/{card_id}[?view=scan][&preview=1]``: the card, from the page cache.

    The busiest page, so a plain Starlette endpoint: it reads the two query
    values and app state itself, since FastAPI's parameter and dependency
    resolution costs more than sending a cached page (docs/performance.md).
    """
    card_id: str = request.path_params["card_id"]
    view, preview = _query(request.query_params)
    if request.query_params.get("run", "").lower() in TRUE:
        # The <noscript> refresh of a page with pending live numbers: run them now.
        snapshot_now: Snapshot = request.app.state.library.snapshot
        found = await get_card(card_id, snapshot_now)
        context = await _complete(
            found,
            snapshot_now,
            request.app.state.live,
            view=view,
            options=option_order(found, request),
        )
        return templates.TemplateResponse(request, "card.html", context)
    snapshot: Snapshot = request.app.state.library.snapshot
    live: LiveResults = request.app.state.live
    cache: PageCache = request.app.state.page_cache
    card = await get_card(card_id, snapshot)
    options = option_order(card, request)
    key = _page_key(snapshot, live, card, view, preview, options)
    page = cache.get(key)
    if page is None:
        # Cached pages are the same for everyone: rendered with a placeholder
        # where the session's CSRF token goes, swapped in below (app.web.middleware.csrf).
        request.scope[csrf.RENDER_KEY] = csrf.PLACEHOLDER
        response = templates.TemplateResponse(
            request,
            "card.html",
            _context(card, snapshot, live, preview=preview, view=view, options=options),
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
    params = QueryParams(scope["query_string"])
    if "run" in params:  # a no-JavaScript refresh that runs the live numbers first
        return None
    try:
        view, preview = _query(params)
    except HTTPException:
        return None
    key = _page_key(snapshot, state.live, card, view, preview, option_order(card, scope))
    page: Page | None = state.page_cache.get(key)
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


@router.post(
    "/cards/{card_id}/reveal",
    response_class=HTMLResponse,
    name="reveal",
    responses=pages(404) | UNSAFE,
)
async def reveal(
    request: Request,
    card: CardDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    htmx: HtmxDep,
    answer: Annotated[str, Form(max_length=MAX_ANSWER_LENGTH)] = "",
) -> HTMLResponse:
    options = option_order(card, request)
    if htmx:
        context = _context(
            card, snapshot, live, revealed=True, typed_answer=answer, options=options
        )
        return render(request, "card.html", context, fragment="_practice.html")
    # Without JavaScript nothing will fetch the live numbers later: run them now.
    context = await _complete(
        card, snapshot, live, revealed=True, typed_answer=answer, options=options
    )
    return render(request, "card.html", context)


@router.post(
    "/cards/{card_id}/choice",
    response_class=HTMLResponse,
    name="choice",
    responses=pages(404) | UNSAFE,
)
async def choose(
    request: Request,
    card: CardDep,
    snapshot: SnapshotDep,
    live: LiveDep,
    htmx: HtmxDep,
    session: SessionDep,
    learner: LearnerDep,
    choice: Annotated[str, Form(max_length=8)] = "",
    revealed: Annotated[bool, Form()] = False,  # the plain form: the page as it was
    answer: Annotated[str, Form(max_length=MAX_ANSWER_LENGTH)] = "",
) -> HTMLResponse:
    quiz = card.multiple_choice
    if quiz is None:
        raise HTTPException(404, "This card has no multiple-choice question.")
    picked = quiz.choice(choice)
    if picked is None:
        keys = ", ".join(c.key for c in quiz.choices)
        raise HTTPException(422, f"Pick one of the options ({keys}) before checking.")
    await asyncio.to_thread(record_choice, session, learner, card_id=card.id, choice=picked)
    # A new attempt: the next time the card is shown, its options are shuffled again.
    cookie = session_of(request.scope)
    options = option_order(card, request)
    cookie["m"] = int(cookie.get("m", 0)) + 1
    cookie.modified = True
    result = {
        "choice": picked,
        "correct": picked.correct,
        "red_flag": card.red_flag(picked.flag) if picked.flag else None,
    }
    if htmx:
        context = _context(card, snapshot, live, choice_result=result, options=options)
        return render(request, "card.html", context, fragment="_choice_result.html")
    context = await _complete(
        card, snapshot, live, revealed=revealed, typed_answer=answer, options=options
    )
    context["choice_result"] = result
    return render(request, "card.html", context)


@router.get(
    "/cards/{card_id}/preview",
    response_class=HTMLResponse,
    name="card_preview",
    responses=pages(204, 404),
)
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
        card,
        snapshot,
        live,
        preview=True,
        view=view,
        revealed=revealed,
        typed_answer=answer,
        options=option_order(card, request),
    )
    return templates.TemplateResponse(request, "_card_article.html", context)

"""The card page: practise a question, reveal, answer the multiple choice."""

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from app.content.card import Card, Problem, content_hash
from app.content.library import Snapshot
from app.live.results import LiveResults, demo_views
from app.practice import MAX_ANSWER_LENGTH
from app.practice.progress import record_choice
from app.web.deps import CardDep, LearnerDep, LiveDep, SessionDep, SnapshotDep, get_card
from app.web.middleware import csrf
from app.web.pagecache import PageCache
from app.web.render import render
from app.web.responses import UNSAFE, pages
from app.web.templating import templates

router = APIRouter()


def preview_state(card: Card, problems: list[Problem]) -> str:
    """Changes whenever the card or its file's problems change."""
    return content_hash(card.content_hash + "".join(str(p) for p in problems))[:16]


def _context(
    card: Card, snapshot: Snapshot, live: LiveResults, **extra: object
) -> dict[str, object]:
    measurements = live.measurements(card)
    problems = snapshot.problems.get(card.path, [])
    return {
        "card": card,
        "problems": problems,
        "preview_state": preview_state(card, problems) if snapshot.reloading else None,
        "measurements": measurements,
        "live_pending": any(m.status == "pending" for m in measurements.values()),
        "demo_views": demo_views(live, card),
        "view": "practice",
        "revealed": False,
        "typed_answer": "",
        "choice_result": None,
        **extra,
    }


@router.get("/cards/{card_id}", response_class=HTMLResponse, name="card", responses=pages(404))
async def card_page(
    request: Request,
    card_id: str,
    view: Annotated[Literal["practice", "scan"], Query()] = "practice",
) -> Response:
    # The busiest page: it reads app state directly instead of through four
    # dependencies, whose resolution would cost more than serving a cached page.
    snapshot: Snapshot = request.app.state.library.snapshot
    live: LiveResults = request.app.state.live
    cache: PageCache = request.app.state.page_cache
    card = await get_card(card_id, snapshot)
    problems = snapshot.problems.get(card.path, [])
    key = (card, view, tuple(problems), live.signature(card), snapshot.reloading)
    body = cache.get(key)
    if body is None:
        # Cached pages are the same for everyone: rendered with a placeholder
        # where the session's CSRF token goes, swapped in below (app.web.middleware.csrf).
        request.scope[csrf.RENDER_KEY] = csrf.PLACEHOLDER
        response = templates.TemplateResponse(
            request, "card.html", _context(card, snapshot, live, view=view)
        )
        del request.scope[csrf.RENDER_KEY]
        body = bytes(response.body)
        cache.put(key, body)
    return HTMLResponse(csrf.personalise(body, request.scope))


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
    answer: Annotated[str, Form(max_length=MAX_ANSWER_LENGTH)] = "",
) -> HTMLResponse:
    context = _context(card, snapshot, live, revealed=True, typed_answer=answer)
    return render(request, "card.html", context, fragment="_practice.html")


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

    Polled every second by a card page while content reloading is on, so an
    author sees each save (and its check problems) without reloading.
    """
    problems = snapshot.problems.get(card.path, [])
    if not snapshot.reloading or preview_state(card, problems) == since:
        return Response(status_code=204)
    context = _context(card, snapshot, live, view=view, revealed=revealed, typed_answer=answer)
    return templates.TemplateResponse(request, "_card_article.html", context)

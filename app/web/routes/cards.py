"""The card page: practise a question, reveal, answer the multiple choice."""

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from app.content.card import Card, Choice, Problem, content_hash
from app.content.library import Snapshot
from app.live.client import WorkerError
from app.live.results import LiveResults, Measurement, demo_views
from app.practice import MAX_ANSWER_LENGTH
from app.practice.progress import record_choice
from app.web.deps import CardDep, HtmxDep, LearnerDep, LiveDep, SessionDep, SnapshotDep, get_card
from app.web.middleware import csrf
from app.web.middleware.sessions import session_of
from app.web.pagecache import PageCache
from app.web.render import render
from app.web.templating import templates

router = APIRouter()


def preview_state(card: Card, problems: list[Problem]) -> str:
    """Changes whenever the card or its file's problems change."""
    return content_hash(card.content_hash + "".join(str(p) for p in problems))[:16]


def option_order(card: Card, request: Request) -> tuple[Choice, ...]:
    """The card's options as this learner sees them on this attempt.

    Seeded by who asks (the account, else the session) and how many answers the
    session has given: fixed across reloads, new after each answer.
    """
    if card.multiple_choice is None:
        return ()
    session = session_of(request.scope)
    who = session.get("u") or session.csrf
    return card.multiple_choice.shuffled(f"{who}:{card.id}:{session.get('m', 0)}")


def _context(
    card: Card, snapshot: Snapshot, live: LiveResults, **extra: object
) -> dict[str, object]:
    measurements = live.measurements(card)
    problems = snapshot.problems.get(card.path, [])
    return {
        "card": card,
        "options": card.multiple_choice.choices if card.multiple_choice else (),
        "problems": problems,
        "preview_state": preview_state(card, problems) if snapshot.reloading else None,
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
    return _context(
        card,
        snapshot,
        live,
        measurements=measurements,
        live_pending=False,
        demo_errors=errors,
        **extra,
    )


@router.get("/cards/{card_id}", response_class=HTMLResponse, name="card")
async def card_page(
    request: Request,
    card_id: str,
    view: Annotated[Literal["practice", "scan"], Query()] = "practice",
    run: Annotated[bool, Query()] = False,
) -> Response:
    if run:  # the <noscript> refresh of a page with pending live numbers: run them now
        snapshot_now: Snapshot = request.app.state.library.snapshot
        found = await get_card(card_id, snapshot_now)
        context = await _complete(found, snapshot_now, request.app.state.live, view=view)
        return templates.TemplateResponse(request, "card.html", context)
    # The busiest page: it reads app state directly instead of through four
    # dependencies, whose resolution would cost more than serving a cached page.
    snapshot: Snapshot = request.app.state.library.snapshot
    live: LiveResults = request.app.state.live
    cache: PageCache = request.app.state.page_cache
    card = await get_card(card_id, snapshot)
    problems = snapshot.problems.get(card.path, [])
    options = option_order(card, request)
    order = tuple(option.key for option in options)
    key = (card, view, tuple(problems), live.signature(card), snapshot.reloading, order)
    body = cache.get(key)
    if body is None:
        # Cached pages are the same for everyone: rendered with a placeholder
        # where the session's CSRF token goes, swapped in below (app.web.middleware.csrf).
        request.scope[csrf.RENDER_KEY] = csrf.PLACEHOLDER
        response = templates.TemplateResponse(
            request, "card.html", _context(card, snapshot, live, view=view, options=options)
        )
        del request.scope[csrf.RENDER_KEY]
        body = bytes(response.body)
        cache.put(key, body)
    return HTMLResponse(csrf.personalise(body, request.scope))


@router.post("/cards/{card_id}/reveal", response_class=HTMLResponse, name="reveal")
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


@router.post("/cards/{card_id}/choice", response_class=HTMLResponse, name="choice")
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

    Polled every second by a card page while content reloading is on, so an
    author sees each save (and its check problems) without reloading.
    """
    problems = snapshot.problems.get(card.path, [])
    if not snapshot.reloading or preview_state(card, problems) == since:
        return Response(status_code=204)
    context = _context(
        card,
        snapshot,
        live,
        view=view,
        revealed=revealed,
        typed_answer=answer,
        options=option_order(card, request),
    )
    return templates.TemplateResponse(request, "_card_article.html", context)

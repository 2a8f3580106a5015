"""Live numbers and interactive demos: badges for a card, one demo's result."""

import re
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from app.content.card import Card
from app.content.library import Snapshot
from app.demos import CATALOG, InvalidParams, UnknownDemo, demo_spec
from app.live.client import WorkerError, WorkerRejected
from app.live.results import DemoView, demo_view
from app.web.deps import CardDep, HtmxDep, LiveDep, SnapshotDep
from app.web.render import render
from app.web.responses import pages
from app.web.templating import templates

router = APIRouter()

_SLOT = re.compile(r"^[a-z0-9-]{1,120}$")
_CARD_SLOT = re.compile(r"^demo-(?P<card>[a-z0-9-]+)-[0-9]+$")  # livecheck.demo_views names them
RESERVED = {"_slot"}


@router.get(
    "/cards/{card_id}/live", response_class=HTMLResponse, name="card_live", responses=pages(404)
)
async def card_live(request: Request, card: CardDep, live: LiveDep) -> HTMLResponse:
    """Every live number of a card, run through the worker when not cached (htmx OOB swaps)."""
    measurements = await live.check(card)
    return templates.TemplateResponse(
        request, "_live_badges.html", {"card": card, "measurements": measurements}
    )


def _card_of(snapshot: Snapshot, slot: str) -> Card | None:
    """The card a demo's form was embedded in, for the demo page's way back to it."""
    found = _CARD_SLOT.match(slot)
    return snapshot.cards.get(found["card"]) if found else None


@router.get("/demos/{demo_name}", response_class=HTMLResponse, name="demo", responses=pages(404))
async def demo(
    request: Request,
    demo_name: str,
    live: LiveDep,
    htmx: HtmxDep,
    snapshot: SnapshotDep,
    slot: Annotated[str, Query(alias="_slot", pattern=_SLOT.pattern)] = "demo",
) -> HTMLResponse:
    """One demo with the parameters in the query string.

    Over htmx: the result if it is ready, else a status fragment that asks
    again shortly while the worker computes. As a full page: waits for it.
    """
    given = {k: v for k, v in request.query_params.items() if k not in RESERVED}
    try:
        view = demo_view(live, demo_name, dict(given), slot)
    except InvalidParams as error:
        # Said beside the form, at the field the spec names; nothing is sent.
        refused = DemoView(demo_spec(demo_name), dict(given), None, slot)
        refusal = {
            "view": refused,
            "error": str(error),
            "error_field": error.problems[0].param,
            "card": _card_of(snapshot, slot),
        }
        return render(request, "demo.html", refusal, fragment="_demo_result.html", status_code=422)
    except UnknownDemo:
        known = ", ".join(CATALOG)
        raise HTTPException(
            404, f"There is no demo called '{demo_name}'. The demos are {known}."
        ) from None
    context: dict[str, Any] = {"view": view, "error": None, "card": _card_of(snapshot, slot)}
    result = view.result
    if result is None and htmx:
        failure = live.take_failure(demo_name, view.params)
        if failure is not None:
            context["error"] = failure
            return templates.TemplateResponse(
                request, "_demo_result.html", context, status_code=503
            )
        if not live.running(demo_name, view.params):
            live.start(demo_name, view.params)
        return templates.TemplateResponse(request, "_demo_status.html", context)
    if result is None:
        try:
            result = await live.result(demo_name, view.params, persist=False)
        except WorkerRejected as exc:  # a setting the worker refuses: say so beside the form
            context["error"] = str(exc)
            return templates.TemplateResponse(request, "demo.html", context, status_code=422)
        except WorkerError as exc:
            context["error"] = str(exc)
            return templates.TemplateResponse(request, "demo.html", context, status_code=503)
    context["view"] = DemoView(view.spec, view.params, result, slot)
    return render(request, "demo.html", context, fragment="_demo_result.html")

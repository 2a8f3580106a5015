"""Dependencies shared by the routes.

They are ``async def`` on purpose: FastAPI runs a plain ``def`` dependency in
the thread pool, which costs more than these attribute look-ups themselves.
"""

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from app.content.card import Card
from app.content.library import Library, Snapshot
from app.web.render import wants_fragment


async def get_snapshot(request: Request) -> Snapshot:
    # One snapshot per request, so a reload mid-request cannot mix versions.
    library: Library = request.app.state.library
    return library.snapshot


async def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request, so the route can answer with a fragment."""
    return wants_fragment(request)


SnapshotDep = Annotated[Snapshot, Depends(get_snapshot)]
HtmxDep = Annotated[bool, Depends(is_htmx)]


async def get_card(card_id: str, snapshot: SnapshotDep) -> Card:
    card = snapshot.cards.get(card_id)
    if card is None:
        raise HTTPException(404, f"There is no card with the id '{card_id}'.")
    return card


CardDep = Annotated[Card, Depends(get_card)]

"""Dependencies shared by the routes."""

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from app.card import Card
from app.library import Library, Snapshot


def get_library(request: Request) -> Library:
    library: Library = request.app.state.library
    return library


def get_snapshot(request: Request) -> Snapshot:
    # One snapshot per request, so a reload mid-request cannot mix versions.
    return get_library(request).snapshot


def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request, so the route can answer with a fragment."""
    return request.headers.get("HX-Request") == "true" and not request.headers.get(
        "HX-History-Restore-Request"
    )


LibraryDep = Annotated[Library, Depends(get_library)]
SnapshotDep = Annotated[Snapshot, Depends(get_snapshot)]
HtmxDep = Annotated[bool, Depends(is_htmx)]


def get_card(card_id: str, snapshot: SnapshotDep) -> Card:
    card = snapshot.cards.get(card_id)
    if card is None:
        raise HTTPException(404, f"There is no card with the id '{card_id}'.")
    return card


CardDep = Annotated[Card, Depends(get_card)]

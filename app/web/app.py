"""Build the web app: settings, content library, routes, static files."""

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable
from functools import partial

from fastapi import FastAPI

from app.accounts.limits import LoginLimiter
from app.content.library import Library, Snapshot
from app.content.watching import watch
from app.live.client import WorkerClient
from app.live.results import LiveResults
from app.practice.aliases import adopt_aliases, key_renames, renames
from app.settings import Settings, get_settings
from app.storage.database import Database
from app.storage.results import DatabaseResultStore
from app.web import errors
from app.web.middleware.auth import AccountMiddleware
from app.web.middleware.csrf import CSRFMiddleware
from app.web.middleware.failures import FailureMiddleware
from app.web.middleware.outbound import OutboundMiddleware
from app.web.middleware.rootpath import RootPathMiddleware
from app.web.middleware.sessions import SessionMiddleware
from app.web.pagecache import PageCache
from app.web.responses import every_route
from app.web.routes import (
    accounts,
    cards,
    decks,
    health,
    home,
    interview,
    live,
    progress,
    review,
    signin,
    stats,
)
from app.web.secret import session_secret
from app.web.staticfiles import CachedStaticFiles
from app.web.templating import STATIC_DIR

logger = logging.getLogger(__name__)


def _adopt_aliases(database: Database, snapshot: Snapshot) -> None:
    """Move history kept under renamed cards' old ids and follow-ups' old keys."""
    if not renames(snapshot.cards.values()) and not key_renames(snapshot.cards.values()):
        return
    with database.session() as session:
        moved = adopt_aliases(session, snapshot.cards.values())
        session.commit()
    if moved:
        logger.info("moved %d history rows from old card ids to their aliases' cards", moved)


def _reloaded(database: Database) -> Callable[[Snapshot], None]:
    """What follows a reload: log it, and move renamed cards' history (in a thread)."""

    def after(snapshot: Snapshot) -> None:
        logger.info("content reloaded: %d cards", len(snapshot.cards))
        for problem in snapshot.all_problems():
            logger.warning("%s", problem)
        # Database work stays off the event loop; the executor keeps the job alive.
        asyncio.get_running_loop().run_in_executor(None, _adopt_aliases, database, snapshot)

    return after


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """The middleware stack, innermost first (docs/security.md explains the order)."""
    # Added innermost first: the session is read, then the CSRF token checked,
    # then (accounts mode) the signed-in account looked up (docs/security.md).
    app.add_middleware(cards.CachedCardPages)  # innermost: a cached page skips routing
    if settings.auth == "accounts":
        app.add_middleware(AccountMiddleware)
    app.add_middleware(CSRFMiddleware)
    app.add_middleware(SessionMiddleware, secret=session_secret(settings))
    # Inside the headers, outside the rest: every failure is a page with headers.
    app.add_middleware(FailureMiddleware)
    # HEAD for every GET route, security headers, gzip.
    app.add_middleware(OutboundMiddleware, minimum_size=500)
    if settings.root_path:  # outermost: every layer inside builds URLs under it
        app.add_middleware(RootPathMiddleware, root_path=settings.root_path)


def _include_routers(app: FastAPI, settings: Settings) -> None:
    app.include_router(cards.router)  # first: the busiest page is matched first
    app.include_router(health.router)
    app.include_router(home.router)
    app.include_router(decks.router)
    app.include_router(live.router)
    app.include_router(review.router)
    app.include_router(interview.router)
    app.include_router(stats.router)
    app.include_router(progress.router)
    if settings.auth == "accounts":
        app.include_router(signin.router)
        app.include_router(accounts.router)


def _card_url(app: FastAPI, root_path: str, card_id: str) -> str:
    """Where a ``card:ID`` link in a card's HTML points: the card route, under the root path."""
    return root_path + app.url_path_for("card", card_id=card_id)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        library = Library(
            settings.content_dir,
            reloading=settings.reload_content,
            cache_dir=settings.data_dir / "cache" / "cards",
            card_url=partial(_card_url, app, settings.root_path),
        )
        snapshot = await asyncio.to_thread(library.load)
        logger.info("loaded %d cards from %s", len(snapshot.cards), settings.content_dir)
        for problem in snapshot.all_problems():
            logger.warning("%s", problem)
        app.state.library = library
        database = Database(settings.resolved_database_url)
        # Migrations first: no request may see a schema older than the code.
        await asyncio.to_thread(database.prepare)
        await asyncio.to_thread(_adopt_aliases, database, snapshot)
        app.state.db = database
        client = (
            WorkerClient(settings.worker_url, timeout=settings.worker_timeout)
            if settings.worker_url
            else None
        )
        app.state.live = LiveResults(client, DatabaseResultStore(database))
        # What start-up built (parsed cards, engine, templates) lives as long as the
        # app: frozen out of the cyclic GC, whose full passes would otherwise walk it
        # all and pause a request for 100 ms and more (scripts/bench_practice.py).
        gc.collect()
        gc.freeze()
        watcher = None
        if settings.reload_content:
            watcher = asyncio.create_task(
                watch(library, settings.reload_interval, _reloaded(database))
            )
        try:
            yield
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            if client is not None:
                await client.aclose()
            await asyncio.to_thread(database.dispose)

    app = FastAPI(
        title="Quizlab",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        # What any route may answer, documented once (schemathesis checks it).
        responses=every_route(accounts=settings.auth == "accounts"),
    )
    app.state.settings = settings
    app.state.page_cache = PageCache()
    app.state.login_limiter = LoginLimiter()
    # Origins whose forms are this site's besides the request's own (app.web.middleware.csrf).
    origin = settings.public_origin
    app.state.trusted_origins = frozenset({origin} if origin else ())
    _add_middleware(app, settings)
    errors.install(app)
    app.mount("/static", CachedStaticFiles(directory=STATIC_DIR), name="static")
    _include_routers(app, settings)
    return app

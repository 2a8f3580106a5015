"""Build the web app: settings, content library, routes, static files."""

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware

from app.accounts.limits import LoginLimiter
from app.content.library import Library
from app.live.client import WorkerClient
from app.live.results import LiveResults
from app.settings import Settings, get_settings
from app.storage.database import Database
from app.storage.results import DatabaseResultStore
from app.web import errors
from app.web.middleware.auth import AccountMiddleware
from app.web.middleware.csrf import CSRFMiddleware
from app.web.middleware.failures import FailureMiddleware
from app.web.middleware.security import SecurityHeadersMiddleware
from app.web.middleware.sessions import SessionMiddleware
from app.web.pagecache import PageCache
from app.web.responses import every_route
from app.web.routes import (
    accounts,
    cards,
    decks,
    health,
    home,
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


async def _watch_content(library: Library, interval: float) -> None:
    """Re-read card files when they change; stat calls run off the event loop."""
    while True:
        await asyncio.sleep(interval)
        try:
            if await asyncio.to_thread(library.changed):
                snapshot = await asyncio.to_thread(library.load)
                logger.info("content reloaded: %d cards", len(snapshot.cards))
                for problem in snapshot.all_problems():
                    logger.warning("%s", problem)
        except Exception:  # keep watching after an unexpected error; it is logged
            logger.exception("content reload failed")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        library = Library(settings.content_dir, reloading=settings.reload_content)
        snapshot = await asyncio.to_thread(library.load)
        logger.info("loaded %d cards from %s", len(snapshot.cards), settings.content_dir)
        for problem in snapshot.all_problems():
            logger.warning("%s", problem)
        app.state.library = library
        database = Database(settings.resolved_database_url)
        # Migrations first: no request may see a schema older than the code.
        await asyncio.to_thread(database.prepare)
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
            watcher = asyncio.create_task(_watch_content(library, settings.reload_interval))
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
    # Added innermost first: the session is read, then the CSRF token checked,
    # then (accounts mode) the signed-in account looked up (docs/security.md).
    if settings.auth == "accounts":
        app.add_middleware(AccountMiddleware)
    app.add_middleware(CSRFMiddleware)
    app.add_middleware(SessionMiddleware, secret=session_secret(settings))
    app.add_middleware(GZipMiddleware, minimum_size=500)
    # Inside the headers, outside the rest: every failure is a page with headers.
    app.add_middleware(FailureMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    errors.install(app)
    app.mount("/static", CachedStaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(health.router)
    app.include_router(home.router)
    app.include_router(decks.router)
    app.include_router(cards.router)
    app.include_router(live.router)
    app.include_router(review.router)
    app.include_router(stats.router)
    app.include_router(progress.router)
    if settings.auth == "accounts":
        app.include_router(signin.router)
        app.include_router(accounts.router)
    return app

"""Following card files as they are saved: OS notifications, or scanning where there are none.

:func:`watch` waits on the operating system's file notifications (inotify,
FSEvents, ReadDirectoryChangesW, through ``watchfiles``), so a site at rest
does no work at all, and hands each batch of changed paths to
:meth:`Library.update`, which re-reads only those files. Where notifications
cannot be had (the watcher fails to start, or ``WATCHFILES_FORCE_POLLING`` is
set, as some bind mounts from other hosts need since they send no events), it
scans the folders every ``interval`` seconds instead, in watchfiles' Rust
code, and says so in the log.
"""

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

import watchfiles

from app.content.library import Library, Snapshot

logger = logging.getLogger(__name__)

Reloaded = Callable[[Snapshot], None]


def is_card_file(change: watchfiles.Change, path: str) -> bool:
    """Card files, folders, and deletions of anything.

    A folder (a deck copied in, renamed or removed) makes the library scan
    everything again, since files written into a new folder before it is
    watched are never reported one by one.
    """
    name = os.path.basename(path)
    if name.startswith("."):
        return False
    if name.endswith(".md") or change == watchfiles.Change.deleted:
        return True
    return os.path.isdir(path)


def _polling_forced() -> bool:
    value = os.environ.get("WATCHFILES_FORCE_POLLING", "")
    return bool(value) and value.lower() not in {"false", "disable", "disabled"}


async def watch(library: Library, interval: float, on_reload: Reloaded) -> None:
    """Follow the library's roots until cancelled; ``on_reload`` gets each new snapshot."""
    roots = [root for root in library.roots if root.exists()]
    if not roots:
        logger.warning("content folder missing: not watching for edits")
        return
    polling = _polling_forced()
    while True:
        if polling:  # a warning, so that it shows with uvicorn's default logging
            logger.warning(
                "watching content by scanning every %.1f s (no OS notifications)", interval
            )
        else:
            logger.info("watching content with OS file notifications")
        try:
            await _follow(library, roots, polling, interval, on_reload)
            return
        except (OSError, RuntimeError) as exc:  # e.g. the inotify watch limit
            if polling:
                raise
            logger.warning("file notifications unavailable (%s): falling back to scanning", exc)
            polling = True


async def _follow(
    library: Library, roots: list[Path], polling: bool, interval: float, on_reload: Reloaded
) -> None:
    async for changes in watchfiles.awatch(
        *roots,
        watch_filter=is_card_file,
        force_polling=polling,
        poll_delay_ms=int(interval * 1000),
        debounce=400,
        step=50,
    ):
        paths = [Path(path) for _, path in changes]
        try:
            snapshot = await asyncio.to_thread(library.update, paths)
        except Exception:  # keep watching after an unexpected error; it is logged
            logger.exception("content reload failed")
            continue
        on_reload(snapshot)

"""The content check as the command line runs it: once, or again on every save."""

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from app.content.card import Problem
from app.content.library import Library, card_files, check_paths, display_path
from app.settings import Settings

Echo = Callable[..., None]


def _demo_problems(targets: list[Path], settings: Settings, echo: Echo) -> list[Problem]:
    from app.live.client import WorkerClient
    from app.live.localworker import LocalWorker, LocalWorkerError
    from app.live.results import verify_cards

    wanted = {display_path(p) for p in card_files(targets)}
    snapshot = Library(settings.content_dir, *targets).load()
    cards = [card for card in snapshot.cards.values() if card.path in wanted and card.bindings]

    async def verify(url: str) -> list[Problem]:
        client = WorkerClient(url, timeout=max(settings.worker_timeout, 60.0))
        try:
            return await verify_cards(cards, client)
        finally:
            await client.aclose()

    if settings.worker_url:
        return asyncio.run(verify(settings.worker_url))
    try:
        with LocalWorker() as url:
            echo(f"Started a local demo worker at {url}", err=True)
            return asyncio.run(verify(url))
    except LocalWorkerError as exc:
        return [Problem(path, 1, f"live check unavailable: {exc}") for path in sorted(wanted)]


def run_check(targets: list[Path], settings: Settings, *, run_demos: bool, echo: Echo) -> bool:
    """Print every problem as ``path:line: message``; True when there were any."""
    problems = check_paths(targets, settings.content_dir)
    if run_demos and not problems:
        # Only a card that passes the other checks has numbers worth measuring.
        problems = _demo_problems(targets, settings, echo)
    for problem in problems:
        echo(str(problem))
    count = len(card_files(targets))
    if problems:
        echo(f"{len(problems)} problem(s) in {count} card file(s)", err=True)
    else:
        measured = ", live numbers measured" if run_demos else ""
        echo(f"{count} card file(s) checked{measured}, no problems", err=True)
    return bool(problems)


def watch_and_check(
    targets: list[Path], settings: Settings, *, run_demos: bool, echo: Echo, interval: float = 0.5
) -> None:
    """Check now, then again whenever a card file under the targets changes."""
    library = Library(*targets)
    library.load()
    run_check(targets, settings, run_demos=run_demos, echo=echo)
    echo("Watching for changes; Ctrl-C stops.", err=True)
    try:
        while True:
            time.sleep(interval)
            if library.changed():
                library.load()
                echo(f"--- {time.strftime('%H:%M:%S')} change seen, checking again", err=True)
                run_check(targets, settings, run_demos=run_demos, echo=echo)
    except KeyboardInterrupt:
        echo("Stopped watching.", err=True)

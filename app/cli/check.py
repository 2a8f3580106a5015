"""The content check as the command line runs it: once, or again on every save."""

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
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


def run_check(
    targets: list[Path],
    settings: Settings,
    *,
    run_demos: bool,
    echo: Echo,
    strict: bool = False,
    run_code: bool = False,
) -> bool:
    """Print every problem as ``path:line: message``; True when the check fails.

    Warnings are printed too; they fail the check only when ``strict``.
    """
    found = check_paths(targets, settings.content_dir, warnings=True)
    if strict:
        found = [replace(p, warning=False) for p in found]
    problems = [p for p in found if not p.warning]
    if run_code and not problems:
        from app.content.coderun import code_problems

        problems = code_problems(targets)
    if run_demos and not problems:
        # Only a card that passes the other checks has numbers worth measuring.
        problems = _demo_problems(targets, settings, echo)
    warnings = [p for p in found if p.warning]
    for problem in sorted(problems + warnings):
        echo(str(problem))
    count = len(card_files(targets))
    if problems:
        echo(f"{len(problems)} problem(s) in {count} card file(s)", err=True)
    else:
        measured = ", live numbers measured" if run_demos else ""
        ran = ", code run" if run_code else ""
        noted = f", {len(warnings)} warning(s) (--strict fails on them)" if warnings else ""
        echo(f"{count} card file(s) checked{ran}{measured}, no problems{noted}", err=True)
    return bool(problems)


def watch_and_check(
    targets: list[Path],
    settings: Settings,
    *,
    run_demos: bool,
    echo: Echo,
    interval: float = 0.5,
    strict: bool = False,
) -> None:
    """Check now, then again whenever a card file under the targets changes."""
    library = Library(*targets)
    library.load()
    run_check(targets, settings, run_demos=run_demos, echo=echo, strict=strict)
    echo("Watching for changes; Ctrl-C stops.", err=True)
    try:
        while True:
            time.sleep(interval)
            if library.changed():
                library.load()
                echo(f"--- {time.strftime('%H:%M:%S')} change seen, checking again", err=True)
                run_check(targets, settings, run_demos=run_demos, echo=echo, strict=strict)
    except KeyboardInterrupt:
        echo("Stopped watching.", err=True)

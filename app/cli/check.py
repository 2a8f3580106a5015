"""The content check as the command line runs it: once, or again on every save."""

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from app.content.card import Problem
from app.content.library import Library, Snapshot, card_files, display_path, problems_in
from app.settings import Settings, get_settings

Echo = Callable[..., None]

EXIT_PROBLEMS = 1
EXIT_USAGE = 2


def _demo_problems(
    snapshot: Snapshot, targets: list[Path], settings: Settings, echo: Echo
) -> list[Problem]:
    from app.live.client import WorkerClient
    from app.live.localworker import LocalWorker, LocalWorkerError
    from app.live.results import verify_cards

    wanted = {display_path(p) for p in card_files(targets)}
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


def _history_problems(
    snapshot: Snapshot, targets: list[Path], settings: Settings, echo: Echo
) -> list[Problem]:
    """Warnings for history in the configured database that no card or follow-up has now.

    Only read: a SQLite file that does not exist means no history (none is
    made), and a database that does not answer is a note, not a failure.
    """
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    from app.practice.orphans import find_orphans, orphan_problems
    from app.storage.database import peek_engine

    engine = peek_engine(settings.resolved_database_url)
    if engine is None:
        return []
    cards = snapshot.cards.values()
    try:
        with Session(engine) as session:
            orphans = find_orphans(session, cards)
    except SQLAlchemyError as exc:
        reason = (str(getattr(exc, "orig", None) or exc).splitlines() or ["no reason given"])[0]
        echo(f"Review history not checked: the database did not answer ({reason})", err=True)
        return []
    finally:
        engine.dispose()
    checked = {display_path(p) for p in card_files(targets)}
    content = settings.content_dir.resolve()
    whole = any(target.resolve() == content for target in targets)
    return orphan_problems(orphans, cards, checked, display_path(content) if whole else None)


def run_check(
    targets: list[Path],
    settings: Settings,
    *,
    run_demos: bool,
    echo: Echo,
    strict: bool = False,
    run_code: bool = False,
    history: bool = True,
) -> bool:
    """Print every problem as ``path:line: message``; True when the check fails.

    Warnings are printed too; they fail the check only when ``strict``. With
    ``history``, review history that lost its card or follow-up is a warning.
    """
    # One reading of the content serves every part of the check: duplicate ids
    # and card links are resolved against the whole content folder.
    snapshot = Library(settings.content_dir, *targets).load()
    found = problems_in(snapshot, targets, warnings=True)
    if history:
        found += _history_problems(snapshot, targets, settings, echo)
    if strict:
        found = [replace(p, warning=False) for p in found]
    problems = [p for p in found if not p.warning]
    if run_code and not problems:
        from app.content.coderun import code_problems

        problems = code_problems(targets)
    if run_demos and not problems:
        # Only a card that passes the other checks has numbers worth measuring.
        problems = _demo_problems(snapshot, targets, settings, echo)
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


def check(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Card files or folders to check (default: the content folder)."),
    ] = None,
    run_demos: Annotated[
        bool,
        typer.Option(
            "--run-demos",
            help="Also run every live number through a demo worker (QUIZLAB_WORKER_URL, or a "
            "local one started for the check) and fail where claim and measurement disagree.",
        ),
    ] = False,
    watch: Annotated[
        bool,
        typer.Option("--watch", help="Check again every time a card file changes (Ctrl-C stops)."),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Fail on warnings too (what CI runs on the bundled cards)."),
    ] = False,
    run_code: Annotated[
        bool,
        typer.Option(
            "--run-code",
            help="Run every ```python run block in a sandboxed subprocess and compare its "
            "output with the block that follows.",
        ),
    ] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history/--no-history",
            help="Warn about review history in the configured database whose card id or "
            "follow-up key no card has now (a rename without 'aliases:' or 'was='). "
            "Read only; skipped when there is no database yet.",
        ),
    ] = True,
) -> None:
    """Check cards and print each problem as path:line: message.

    Exit status: 0 when every card is clean (warnings allowed unless --strict),
    1 when there are problems, 2 on a usage error such as a path that does not
    exist.
    """
    settings = get_settings()
    targets = paths or [settings.content_dir]
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        typer.echo(f"quizlab check: no such file or folder: {', '.join(missing)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    if watch:
        watch_and_check(targets, settings, run_demos=run_demos, echo=typer.echo, strict=strict)
        return
    if run_check(
        targets,
        settings,
        run_demos=run_demos,
        echo=typer.echo,
        strict=strict,
        run_code=run_code,
        history=history,
    ):
        raise typer.Exit(EXIT_PROBLEMS)

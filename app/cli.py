"""The `quizlab` command: serve the site, check cards, run the demo worker."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from app.settings import get_settings

cli = typer.Typer(
    help="Quizlab: interview-prep cards in Markdown, with spaced repetition and live numbers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_PROBLEMS = 1
EXIT_USAGE = 2


@cli.command()
def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; 0.0.0.0 for every interface.")
    ] = ("127.0.0.1"),
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    reload_content: Annotated[
        bool,
        typer.Option(
            "--reload-content/--no-reload-content",
            help="Re-read edited card files within a second (turn off in production).",
        ),
    ] = True,
) -> None:
    """Start the web app.

    Cards come from QUIZLAB_CONTENT_DIR (the bundled content/ by default) and
    progress goes to QUIZLAB_DATABASE_URL (a SQLite file under QUIZLAB_DATA_DIR
    by default).
    """
    import uvicorn

    from app.localworker import LocalWorker, LocalWorkerError
    from app.main import create_app

    settings = get_settings()
    settings.reload_content = reload_content
    local = None
    if not settings.worker_url:
        local = LocalWorker()
        try:
            settings.worker_url = local.start()
            typer.echo(f"Started a local demo worker at {settings.worker_url}", err=True)
        except LocalWorkerError as exc:
            # The site still works: live numbers show "live check unavailable".
            typer.echo(f"warning: {exc}; live numbers will show as unavailable", err=True)
            local = None
    try:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
    finally:
        if local is not None:
            local.stop()


@cli.command()
def worker(
    host: Annotated[
        str, typer.Option(help="Address to listen on; 0.0.0.0 for every interface.")
    ] = ("127.0.0.1"),
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8001,
) -> None:
    """Start the demo worker: runs attention demos with torch and answers with JSON.

    Uses CUDA when available unless QUIZLAB_WORKER_DEVICE=cpu. Point the web
    server at it with QUIZLAB_WORKER_URL=http://HOST:PORT.
    """
    import uvicorn

    uvicorn.run("app.worker.api:create_worker_app", factory=True, host=host, port=port)


@cli.command()
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
) -> None:
    """Check cards and print each problem as path:line: message.

    Exit status: 0 when every card is clean, 1 when there are problems, 2 on a
    usage error such as a path that does not exist.
    """
    from app.check import run_check, watch_and_check

    settings = get_settings()
    targets = paths or [settings.content_dir]
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        typer.echo(f"quizlab check: no such file or folder: {', '.join(missing)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    if watch:
        watch_and_check(targets, settings, run_demos=run_demos, echo=typer.echo)
        return
    if run_check(targets, settings, run_demos=run_demos, echo=typer.echo):
        raise typer.Exit(EXIT_PROBLEMS)


@cli.command()
def new(
    deck: Annotated[
        str, typer.Argument(help="Deck folder under the content folder, e.g. attention.")
    ],
    slug: Annotated[str, typer.Argument(help="File name without .md, e.g. softmax-saturation.")],
) -> None:
    """Write a new card with every section and placeholders to replace.

    The card gets a fresh, permanent id (DECK-SLUG). The check fails on every
    placeholder line until it is written: run `quizlab check --watch` beside it.
    """
    from app.library import Library, display_path
    from app.scaffold import ScaffoldError, new_card

    settings = get_settings()
    taken = set(Library(settings.content_dir).load().cards)
    try:
        path = new_card(settings.content_dir, deck, slug, taken)
    except ScaffoldError as exc:
        typer.echo(f"quizlab new: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(display_path(path))


def main() -> None:
    # Typer exits 2 on usage errors already; keep that contract for `check`.
    sys.exit(cli())

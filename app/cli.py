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

    settings = get_settings()
    settings.reload_content = reload_content
    from app.main import create_app

    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


@cli.command()
def check(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Card files or folders to check (default: the content folder)."),
    ] = None,
) -> None:
    """Check cards and print each problem as path:line: message.

    Exit status: 0 when every card is clean, 1 when there are problems, 2 on a
    usage error such as a path that does not exist.
    """
    from app.library import check_paths

    settings = get_settings()
    targets = paths or [settings.content_dir]
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        typer.echo(f"quizlab check: no such file or folder: {', '.join(missing)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    problems = check_paths(targets, settings.content_dir)
    for problem in problems:
        typer.echo(str(problem))
    from app.library import card_files

    count = len(card_files(targets))
    if problems:
        typer.echo(f"{len(problems)} problem(s) in {count} card file(s)", err=True)
        raise typer.Exit(EXIT_PROBLEMS)
    typer.echo(f"{count} card file(s) checked, no problems", err=True)


def main() -> None:
    # Typer exits 2 on usage errors already; keep that contract for `check`.
    sys.exit(cli())

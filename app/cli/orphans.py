"""``quizlab progress orphans``: history whose card is gone, listed or pruned."""

from typing import Annotated

import typer


def progress_orphans(
    prune: Annotated[
        bool,
        typer.Option("--prune", help="Delete the orphans' schedules and totals, after asking."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Prune without asking.")] = False,
) -> None:
    """List schedules (every learner's) whose card or follow-up the content no longer has.

    With --prune, delete them and the gone cards' stats totals, so /stats stops
    counting them. The review log is append-only and kept: a card brought back
    (or given the old id as an alias) finds it again.
    """
    from app.cli.commands import _database
    from app.content.library import Library
    from app.practice.orphans import find_orphans, prune_orphans
    from app.settings import get_settings

    cards = Library(get_settings().content_dir).load().cards.values()
    database = _database()
    try:
        with database.session() as session:
            orphans = find_orphans(session, cards)
            for orphan in orphans:
                typer.echo(str(orphan))
            if not orphans:
                typer.echo("no orphaned history", err=True)
                return
            typer.echo(f"{len(orphans)} orphan(s)", err=True)
            if not prune:
                typer.echo("run with --prune to delete their schedules and totals", err=True)
                return
            if not yes and not typer.confirm("Delete their schedules and totals?"):
                raise typer.Exit(1)
            deleted = prune_orphans(session, orphans)
            session.commit()
            typer.echo(f"{deleted} row(s) deleted; the review log is kept", err=True)
    finally:
        database.dispose()

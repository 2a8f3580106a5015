"""The `quizlab` command: serve the site, check cards, run the demo worker."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.check import EXIT_PROBLEMS, EXIT_USAGE, check
from app.cli.export import export_cli
from app.cli.proxy import proxy_options
from app.settings import get_settings

if TYPE_CHECKING:
    from app.storage.database import Database

cli = typer.Typer(
    help="Quizlab: interview-prep cards in Markdown, with spaced repetition and live numbers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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
            envvar="QUIZLAB_RELOAD_CONTENT",
            help="Re-read edited card files as they are saved, and offer a live preview "
            "on card pages (?preview=1). On unless QUIZLAB_RELOAD_CONTENT=false, which "
            "the container images set.",
        ),
    ] = True,
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log/--no-access-log",
            envvar="QUIZLAB_ACCESS_LOG",
            help="Log a line per request (off by default: a reverse proxy logs them, and "
            "formatting the line costs a tenth of a cached page's time).",
        ),
    ] = False,
) -> None:
    """Start the web app.

    Cards come from QUIZLAB_CONTENT_DIR (the bundled content/ by default) and
    progress goes to QUIZLAB_DATABASE_URL (a SQLite file under QUIZLAB_DATA_DIR
    by default).
    """
    import uvicorn

    from app.live.localworker import LocalWorker, LocalWorkerError
    from app.web import create_app

    settings = get_settings().model_copy(update={"reload_content": reload_content})
    local = None
    if not settings.worker_url:
        local = LocalWorker()
        try:
            settings = settings.model_copy(update={"worker_url": local.start()})
            typer.echo(f"Started a local demo worker at {settings.worker_url}", err=True)
        except LocalWorkerError as exc:
            # The site still works: live numbers show "live check unavailable".
            typer.echo(f"warning: {exc}; live numbers will show as unavailable", err=True)
            local = None
    try:
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            log_level="info",
            access_log=access_log,
            **proxy_options(os.environ),
        )
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


cli.command()(check)


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
    from app.content.library import Library, display_path
    from app.content.scaffold import ScaffoldError, new_card

    settings = get_settings()
    taken = set(Library(settings.content_dir).load().cards)
    try:
        path = new_card(settings.content_dir, deck, slug, taken)
    except ScaffoldError as exc:
        typer.echo(f"quizlab new: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(display_path(path))


db_cli = typer.Typer(
    help="The progress database: migrations and the schedule.", no_args_is_help=True
)
progress_cli = typer.Typer(
    help="All of your progress as one JSON file (export, import); history whose card is gone.",
    no_args_is_help=True,
)
user_cli = typer.Typer(
    help="Accounts for QUIZLAB_AUTH=accounts (docs/security.md).", no_args_is_help=True
)
cli.add_typer(db_cli, name="db")
cli.add_typer(progress_cli, name="progress")
cli.add_typer(user_cli, name="user")
cli.add_typer(export_cli, name="export")


def _database() -> "Database":
    """The configured database, migrated: every command below works on a fresh install."""
    from app.storage.database import Database

    database = Database(get_settings().resolved_database_url)
    database.upgrade()
    return database


UserOption = Annotated[
    str | None,
    typer.Option("--user", help="Whose progress, in accounts mode; the local user when not given."),
]


def _user_id(database: "Database", user: str | None) -> int:
    """The id of the user named ``user``, or of the local user; exits 2 for an unknown name."""
    if user is None:
        return database.local_user_id
    from app.accounts import users as accounts

    with database.session() as session:
        found = accounts.user_id(session, user)
    if found is None:
        typer.echo(f"error: there is no user called '{user}'", err=True)
        raise typer.Exit(EXIT_USAGE)
    return found


@db_cli.command("upgrade")
def db_upgrade() -> None:
    """Apply the database migrations; the server also applies them when it starts."""
    from app.storage.database import Database

    database = Database(get_settings().resolved_database_url)
    try:
        before = database.current_revision()
        database.upgrade()
        after = database.current_revision()
    finally:
        database.dispose()
    typer.echo(f"database at revision {after} (was {before or 'empty'})", err=True)


@db_cli.command("rebuild-schedule")
def db_rebuild_schedule(user: UserOption = None) -> None:
    """Recompute every item's schedule, and the stats totals, from the review log.

    The log is never changed. Run it after changing QUIZLAB_DESIRED_RETENTION or
    QUIZLAB_TIMEZONE, or to repair the derived tables.
    """
    from app.content.library import Library
    from app.practice import activity
    from app.practice.activity import Learner
    from app.practice.aliases import adopt_aliases
    from app.practice.scheduling import Scheduler
    from app.practice.stored import rebuild_schedule

    settings = get_settings()
    database = _database()
    try:
        learner = Learner(_user_id(database, user), settings.zone)
        with database.session() as session:
            scheduler = Scheduler(desired_retention=settings.desired_retention)
            rebuilt = rebuild_schedule(session, learner.user_id, scheduler)
            activity.rebuild(session, learner)
            # The log keeps renamed cards' old ids: move what was rebuilt under them.
            adopt_aliases(session, Library(settings.content_dir).load().cards.values())
            session.commit()
    finally:
        database.dispose()
    for key in rebuilt.changed:
        typer.echo(f"changed: {key}")
    typer.echo(
        f"{rebuilt.items} item(s) rebuilt from the review log; "
        f"{len(rebuilt.changed)} differed from the stored schedule",
        err=True,
    )


@progress_cli.command("export")
def progress_export(
    file: Annotated[Path, typer.Argument(help="JSON file to write; '-' for standard output.")],
    user: UserOption = None,
) -> None:
    """Write every review and multiple-choice answer to FILE as JSON."""
    from app.practice import progress

    database = _database()
    try:
        with database.session() as session:
            chunks = progress.export(session, _user_id(database, user))
            if str(file) == "-":
                for chunk in chunks:
                    sys.stdout.write(chunk)
            else:
                with file.open("w", encoding="utf-8") as out:
                    out.writelines(chunks)
    finally:
        database.dispose()
    if str(file) != "-":
        typer.echo(f"progress written to {file}", err=True)


def _register_orphans() -> None:
    from app.cli.orphans import progress_orphans

    progress_cli.command("orphans")(progress_orphans)


_register_orphans()


@progress_cli.command("import")
def progress_import(
    file: Annotated[Path, typer.Argument(help="A file written by `quizlab progress export`.")],
    user: UserOption = None,
) -> None:
    """Add the reviews and answers in FILE that are not here yet, then rebuild the schedule.

    Importing the same file twice adds nothing. Exit status: 0 on success, 1
    when the file is not a valid export (nothing is imported), 2 when it is missing.
    """
    from app.practice import progress
    from app.practice.activity import Learner
    from app.practice.scheduling import Scheduler

    if not file.is_file():
        typer.echo(f"quizlab progress import: no such file: {file}", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        parsed = progress.parse(file.read_bytes())
    except progress.ProgressFileError as exc:
        typer.echo(f"quizlab progress import: {file}: {exc}", err=True)
        raise typer.Exit(EXIT_PROBLEMS) from None
    settings = get_settings()
    database = _database()
    try:
        learner = Learner(_user_id(database, user), settings.zone)
        with database.session() as session:
            imported = progress.import_file(
                session,
                learner,
                parsed,
                scheduler=Scheduler(desired_retention=settings.desired_retention),
            )
    finally:
        database.dispose()
    typer.echo(f"{file}: {imported}", err=True)


def main() -> None:
    # Typer exits 2 on usage errors already; keep that contract for `check`.
    sys.exit(cli())


def _read_password() -> str:
    """Prompted twice on a terminal; otherwise the first line of standard input."""
    if sys.stdin.isatty():
        password: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
        return password
    return sys.stdin.readline().rstrip("\r\n")


@user_cli.command("add")
def user_add(
    name: Annotated[str, typer.Argument(help="Sign-in name: lower-case letters, digits, . _ -")],
    admin: Annotated[bool, typer.Option("--admin", help="May invite and disable users.")] = False,
) -> None:
    """Create a user who signs in with a password.

    The first admin takes over the progress of the single-user install's local
    user, so switching QUIZLAB_AUTH from none to accounts loses nothing.
    """
    from app.accounts import users as accounts

    password = _read_password()
    database = _database()
    try:
        with database.session() as session:
            took_over = (
                admin
                and not accounts.has_admin(session)
                and accounts.local_user(session) is not None
            )
            user = accounts.create_user(
                session, name=name, password=password, is_admin=admin, now=accounts.now_utc()
            )
    except accounts.AccountError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    finally:
        database.dispose()
    role = "admin" if user.is_admin else "user"
    typer.echo(f"created {role} {user.name}", err=True)
    if took_over:
        typer.echo("the local user's progress is now theirs", err=True)

"""`quizlab export`: decks as an Anki package or TSV file, or as a static site."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.settings import Settings, get_settings

if TYPE_CHECKING:
    from app.content.library import Deck
    from app.export import ResultSource

EXIT_USAGE = 2

export_cli = typer.Typer(
    help="Take the cards with you: Anki decks (.apkg or TSV), or a static site of any deck.",
    no_args_is_help=True,
)

DeckOption = Annotated[
    list[str] | None,
    typer.Option(
        "--deck",
        metavar="NAME",
        help="A deck to export (the folder name under content/); repeat for several. "
        "Default: every deck.",
    ),
]


def _decks(settings: Settings, names: list[str] | None) -> list["Deck"]:
    """The chosen decks; exits 2 for a deck that does not exist."""
    from app.content.library import Library
    from app.export import UnknownDeck, choose_decks

    snapshot = Library(settings.content_dir).load()
    if snapshot.problems:
        typer.echo(
            f"warning: {len(snapshot.problems)} card file(s) have problems and are left out; "
            "`quizlab check` lists them",
            err=True,
        )
    try:
        return choose_decks(snapshot, names or ())
    except UnknownDeck as exc:
        typer.echo(f"quizlab export: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


@contextmanager
def _stored_results(settings: Settings) -> Iterator["ResultSource | None"]:
    """The live numbers' stored results, when there is a database to read them from.

    An export never creates or migrates a database: without one, every live
    number shows its claim.
    """
    from app.storage.database import Database
    from app.storage.results import DatabaseResultStore

    local = settings.data_dir / "quizlab.sqlite3"
    if not settings.database_url and not local.is_file():
        yield None
        return
    database = Database(settings.resolved_database_url)
    try:
        yield DatabaseResultStore(database) if database.current_revision() else None
    finally:
        database.dispose()


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1024:.0f} KB"


@export_cli.command("anki")
def export_anki(
    out: Annotated[Path, typer.Argument(help="File to write: OUT.apkg, or OUT.tsv with --tsv.")],
    deck: DeckOption = None,
    tsv: Annotated[
        bool,
        typer.Option(
            "--tsv", help="Write tab-separated text for Anki's File > Import instead of a package."
        ),
    ] = False,
) -> None:
    """Write the decks as Anki notes: one per card and one per follow-up.

    Importing a newer export into Anki updates the notes it imported before
    (matched by GUIDs made from the card ids) and keeps their review history.
    Formulas are TeX for Anki's MathJax; live numbers are the values last
    measured in this install's database.
    """
    from app.export import anki_notes, measure, write_apkg, write_tsv

    settings = get_settings()
    decks = _decks(settings, deck)
    cards = [card for chosen in decks for card in chosen.cards]
    with _stored_results(settings) as source:
        notes = anki_notes(cards, measure(cards, source))
    (write_tsv if tsv else write_apkg)(notes, out)
    typer.echo(
        f"{out}: {len(notes)} notes ({len(cards)} cards and their follow-ups) "
        f"from {len(decks)} deck(s), {_size(out)}",
        err=True,
    )


@export_cli.command("site")
def export_site(
    out: Annotated[
        Path,
        typer.Argument(help="Folder to write into: new, empty, or an earlier export (replaced)."),
    ],
    deck: DeckOption = None,
) -> None:
    """Write a static, read-only copy of the decks: plain HTML for any web server or none.

    Every answer, follow-up and multiple-choice explanation is shown; search
    works without a server; links are relative, so the folder can be served
    from any path or opened from disk (OUT/index.html).
    """
    from app.export import SiteError, measure, write_site

    settings = get_settings()
    decks = _decks(settings, deck)
    cards = [card for chosen in decks for card in chosen.cards]
    with _stored_results(settings) as source:
        measured = measure(cards, source)
    try:
        report = write_site(decks, out, measured=measured, exported_at=datetime.now(UTC))
    except SiteError as exc:
        typer.echo(f"quizlab export site: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(
        f"{out}: {report.pages} pages, {report.bytes / 1024:.0f} KB; open {out / 'index.html'}",
        err=True,
    )

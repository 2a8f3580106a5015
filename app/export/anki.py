"""Cards as Anki notes: an ``.apkg`` package (genanki), or a TSV file for Anki's importer.

Each card gives one note, and each of its follow-ups another, all of one
note type, :data:`MODEL`. Three things are fixed forever, because Anki keys
a learner's history on them:

- the note type's id (:data:`MODEL_ID`) and field list (:data:`FIELDS`):
  changing a note type's fields forces every device to a full sync, so the
  spare fields are there for what a later version wants to add;
- each note's GUID, derived from the card id (and the follow-up key) under a
  ``quizlab`` namespace, never from the text, so a re-exported deck updates
  its notes in place and keeps their reviews;
- the deck ids, derived from the deck names.

Anki replaces a note on import only when the incoming one is newer, so every
note carries a real modification time: when its card file last changed, or
its newest live number was measured, whichever is later. Formulas go out as
TeX in ``\\(...\\)`` and ``\\[...\\]`` for Anki's MathJax, code with inline
colours.
"""

import csv
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import genanki
from markupsafe import Markup, escape

from app.content.binding import LiveBinding
from app.content.card import Card, content_hash
from app.content.parse import parse_card
from app.content.rendering import Rich, tex_formulas
from app.export.html import claims_only, inline_code_styles, link_cards
from app.export.measured import LiveValue, Measured

MODEL_ID = 1525504455
MODEL_NAME = "Quizlab"
NAMESPACE = "quizlab"
FIELDS = (
    "Quizlab ID",
    "Question",
    "Answer",
    "TL;DR",
    "Key points",
    "Red flags",
    "Sources",
    "Live numbers",
    "Context",
    "Spare 1",
    "Spare 2",
    "Spare 3",
)
# The headed parts of the back of a note, in the order shown.
BACK_PARTS = ("TL;DR", "Key points", "Red flags", "Live numbers", "Sources")

_FRONT = (
    '{{#Context}}<div class="context">{{Context}}</div>{{/Context}}\n'
    '<div class="question">{{Question}}</div>'
)
_BACK = '{{FrontSide}}\n<hr id="answer">\n<div class="answer">{{Answer}}</div>\n' + "\n".join(
    f'{{{{#{name}}}}}<h3>{name}</h3><div class="part">{{{{{name}}}}}</div>{{{{/{name}}}}}'
    for name in BACK_PARTS
)
_CSS = """\
.card { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 18px;
  line-height: 1.5; text-align: left; color: #1b1f24; background: #fff; max-width: 46rem;
  margin: 0 auto; padding: 0 .5rem; }
.card.nightMode, .nightMode .card { color: #e6edf3; background: #0d1117; }
.context { color: #57606a; font-size: .85em; margin-bottom: .5em; }
.nightMode .context { color: #9da7b3; }
.question { font-size: 1.15em; font-weight: 600; }
h3 { font-size: 1em; margin: 1.2em 0 .3em; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: .2em .5em; }
.math-display, .table-scroll { overflow-x: auto; }
.live { font-weight: 600; }
"""

MODEL = genanki.Model(
    MODEL_ID,
    MODEL_NAME,
    fields=[{"name": name} for name in FIELDS],
    templates=[{"name": "Card", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
    sort_field_index=FIELDS.index("Question"),
)


def deck_id(deck: str) -> int:
    """A deck's Anki id, the same on every export (genanki wants 2**30 to 2**31)."""
    digest = int.from_bytes(hashlib.sha256(f"{NAMESPACE}:{deck}".encode()).digest()[:4])
    return (1 << 30) + digest % (1 << 30)


@dataclass(frozen=True)
class AnkiNote:
    """One note as it goes into a package or a TSV row."""

    guid: str
    deck: str  # Anki's deck name, e.g. Quizlab::attention
    fields: dict[str, str]
    tags: tuple[str, ...]
    modified: int  # seconds since the epoch

    @property
    def front(self) -> str:
        context = self.fields["Context"]
        question = f'<div class="question">{self.fields["Question"]}</div>'
        return f'<div class="context">{context}</div>{question}' if context else question

    @property
    def back(self) -> str:
        parts = [self.fields["Answer"]]
        parts += [f"<h3>{name}</h3>{self.fields[name]}" for name in BACK_PARTS if self.fields[name]]
        return "\n".join(parts)


class _Note(genanki.Note):  # type: ignore[misc]
    """A genanki note with its own modification time (genanki stamps the export time)."""

    def __init__(self, modified: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.modified = modified

    def write_to_db(self, cursor: Any, timestamp: float, deck_id: int, id_gen: Any) -> None:
        super().write_to_db(cursor, self.modified, deck_id, id_gen)


def tex_card(card: Card) -> Card:
    """The card parsed again from its file, with formulas as TeX instead of MathML.

    Falls back to ``card`` (MathML, which current Anki versions also show) when
    the file cannot be read or has changed since ``card`` was loaded: the
    export shows the version the rest of it (the cache key, the site) saw.
    """
    try:
        text = Path(card.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return card
    if content_hash(text) != card.content_hash:
        return card
    with tex_formulas():
        parsed = parse_card(text, card.path).card
    return parsed if parsed is not None and parsed.id == card.id else card


def _html(content: Rich | Markup | str) -> str:
    html = claims_only(content) if isinstance(content, Rich) else str(content)
    # Other cards have no address inside Anki: keep the link text.
    return inline_code_styles(link_cards(html, lambda _card_id: None))


def _list(items: Iterable[str]) -> str:
    shown = [f"<li>{item}</li>" for item in items]
    return f"<ul>{''.join(shown)}</ul>" if shown else ""


def _live_numbers(values: Iterable[LiveValue]) -> str:
    return _list(str(escape(value.summary)) for value in values)


def _tag(text: str) -> str:
    return "_".join(text.split())


def _modified(card: Card, measured: Measured) -> int:
    try:
        changed = Path(card.path).stat().st_mtime
    except OSError:
        changed = 0.0
    latest = measured.latest.get(card.id)
    return int(max(changed, latest.timestamp() if latest else 0.0))


def card_notes(card: Card, measured: Measured) -> list[AnkiNote]:
    """The card's note, then one note per follow-up."""
    tex = tex_card(card)
    values = measured.of(card)
    deck = f"{MODEL_NAME}::{card.deck}"
    tags = tuple(dict.fromkeys(_tag(t) for t in (card.deck, *card.tags)))
    modified = _modified(card, measured)
    sections = tex.sections

    def section(name: str) -> str:
        return _html(sections[name].html) if name in sections else ""

    red_flags = _list(
        f"<strong>{flag.title}</strong> {_html(flag.explanation)}" for flag in tex.red_flags
    )
    sources = _list(_html(source) for source in tex.sources) + _html(tex.notes)
    fields = dict.fromkeys(FIELDS, "")
    fields.update(
        {
            "Quizlab ID": card.id,
            "Question": _html(tex.question),
            "Answer": section("Answer"),
            "TL;DR": section("TL;DR"),
            "Key points": section("Quick scan"),
            "Red flags": red_flags,
            "Sources": sources,
            "Live numbers": _live_numbers(values.values()),
            "Context": str(escape(f"{card.title} · {card.deck} · {card.difficulty}")),
        }
    )
    notes = [AnkiNote(genanki.guid_for(NAMESPACE, card.id), deck, fields, tags, modified)]
    for follow_up in tex.follow_ups:
        used = [p.index for p in follow_up.approach.parts if isinstance(p, LiveBinding)]
        fields = dict.fromkeys(FIELDS, "")
        fields.update(
            {
                "Quizlab ID": f"{card.id}/{follow_up.key}",
                "Question": _html(follow_up.question),
                "Answer": _html(follow_up.approach),
                "Live numbers": _live_numbers(values[i] for i in used if i in values),
                "Context": f"Follow-up to {escape(card.title)}: {_html(tex.question)}",
            }
        )
        notes.append(
            AnkiNote(
                genanki.guid_for(NAMESPACE, card.id, follow_up.key),
                deck,
                fields,
                (*tags, "follow-up"),
                modified,
            )
        )
    return notes


def anki_notes(cards: Sequence[Card], measured: Measured) -> list[AnkiNote]:
    return [note for card in cards for note in card_notes(card, measured)]


def write_apkg(notes: Sequence[AnkiNote], out: Path) -> None:
    """Write the notes as an Anki package, one Anki deck per Quizlab deck."""
    decks: dict[str, genanki.Deck] = {}
    for note in notes:
        deck = decks.get(note.deck)
        if deck is None:
            deck = decks[note.deck] = genanki.Deck(deck_id(note.deck), note.deck)
        deck.add_note(
            _Note(
                note.modified,
                model=MODEL,
                fields=[note.fields[name] for name in FIELDS],
                tags=list(note.tags),
                guid=note.guid,
            )
        )
    genanki.Package(list(decks.values())).write_to_file(str(out))


def write_tsv(notes: Sequence[AnkiNote], out: Path) -> None:
    """Write the notes as tab-separated text for Anki's File > Import (Front and Back columns).

    The header lines tell Anki the separator, that fields are HTML, and which
    columns hold each note's GUID, deck and tags, so importing a newer file
    updates the notes it imported before instead of adding copies.
    """
    with out.open("w", encoding="utf-8", newline="") as file:
        file.write("#separator:tab\n#html:true\n")
        file.write("#guid column:1\n#deck column:2\n#tags column:3\n")
        file.write("#columns:GUID\tDeck\tTags\tFront\tBack\n")
        writer = csv.writer(file, delimiter="\t", lineterminator="\n")
        for note in notes:
            writer.writerow([note.guid, note.deck, " ".join(note.tags), note.front, note.back])

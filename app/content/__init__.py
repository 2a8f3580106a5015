"""Content: cards as Markdown files, parsed, checked and rendered once.

The card format (front matter, sections, follow-ups, red flags, multiple
choice), Markdown and formula rendering, ``{live}`` bindings checked against
the demo specs, the library that loads and reloads a content folder, the
scaffold for a new card, and the runner for the cards' ``python run`` blocks
(:mod:`app.content.coderun`, used only by ``quizlab check --run-code``).

May import: :mod:`app.demos` (specs, to check bindings) and itself. Never the
web, the CLI, storage, practice or torch (tests/test_architecture.py).
"""

from app.content.card import Card, ParseResult, Problem
from app.content.library import Library, Snapshot
from app.content.parse import parse_card

__all__ = ["Card", "Library", "ParseResult", "Problem", "Snapshot", "parse_card"]

"""The ``quizlab`` command line (Typer): serve, worker, check, new, db, progress, user, export.

May import: every part. Imports heavy parts (the web app, the worker) inside
the command that needs them, so ``quizlab check`` never loads torch.
"""

from app.cli.commands import main

__all__ = ["main"]

"""`python -m app` is the `quizlab` command."""

from app.cli import main

main()

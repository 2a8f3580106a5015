"""Quizlab: interview-prep cards in Markdown, practised with spaced repetition."""

__version__ = "0.1.0"

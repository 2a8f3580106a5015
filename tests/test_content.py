"""The bundled content: every card passes the check, so CI enforces it."""

from app.content.library import Library, card_files
from app.settings import PROJECT_ROOT

CONTENT = PROJECT_ROOT / "content"


def test_every_bundled_card_passes_the_check() -> None:
    """As `quizlab check --strict`: the bundled cards have no warnings either."""
    snapshot = Library(CONTENT).load()
    assert [str(p) for p in snapshot.all_problems()] == []
    assert [str(p) for p in snapshot.all_warnings()] == []
    assert len(snapshot.cards) == len(card_files([CONTENT]))


def test_first_card_is_complete() -> None:
    card = Library(CONTENT).load().cards["attention-scaling-factor"]
    assert len(card.sections) == 11  # every section but Multiple choice, which is separate
    assert len(card.follow_ups) >= 3
    assert len(card.red_flags) >= 4
    assert card.sources
    quiz = card.multiple_choice
    assert quiz is not None and len(quiz.choices) == 5


def test_every_bundled_card_has_key_points() -> None:
    cards = Library(CONTENT).load().cards.values()
    assert cards
    for card in cards:
        assert 3 <= len(card.key_points) <= 6, card.path
        assert all(len(point.text) <= 120 for point in card.key_points), card.path


def test_every_live_number_in_the_bundled_content_agrees_with_its_demo(worker_url: str) -> None:
    """`quizlab check --run-demos` over content/, as CI must run it, against a real worker."""
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "app", "check", "--run-demos", str(CONTENT)],
        capture_output=True,
        text=True,
        env={**os.environ, "QUIZLAB_WORKER_URL": worker_url},
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "live numbers measured, no problems" in result.stderr

"""Authoring: a scaffold that fails the check until written, and the check that watches."""

import os
import subprocess
import sys
import time
from pathlib import Path

from app.content.card import PLACEHOLDER
from app.content.library import check_paths


def quizlab(content: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QUIZLAB_CONTENT_DIR": str(content)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_new_card_fails_the_check_until_filled(tmp_path: Path) -> None:
    content = tmp_path / "content"
    result = quizlab(content, "new", "attention", "my-topic")
    assert result.returncode == 0, result.stderr
    path = content / "attention" / "my-topic.md"
    assert result.stdout.strip().endswith("attention/my-topic.md")
    text = path.read_text()
    for section in (
        "## Answer",
        "## TL;DR",
        "## Key points",
        "## Analogy",
        "## Deep dive",
        "## When it doesn't apply",
        "## Quick scan",
        "## Side by side",
        "## Real-world examples",
        "## Follow-ups",
        "## Red flags",
        "## Multiple choice",
    ):
        assert section in text
    assert "id: attention-my-topic" in text

    problems = check_paths([content], content)
    placeholder_lines = [n for n, line in enumerate(text.splitlines(), 1) if PLACEHOLDER in line]
    assert [p.line for p in problems] == placeholder_lines
    assert {p.message for p in problems} == {"placeholder 'TODO' left in the card: replace it"}

    path.write_text(text.replace(f"{PLACEHOLDER} ", "Written "))
    assert check_paths([content], content) == []


def test_new_refuses_bad_names_and_existing_files(tmp_path: Path) -> None:
    content = tmp_path / "content"
    assert quizlab(content, "new", "attention", "one").returncode == 0
    again = quizlab(content, "new", "attention", "one")
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = quizlab(content, "new", "Attention", "x y")
    assert bad.returncode == 2 and "must be lowercase letters, digits and '-'" in bad.stderr


def test_check_watch_checks_again_on_save(tmp_path: Path) -> None:
    content = tmp_path / "content"
    assert quizlab(content, "new", "attention", "watched").returncode == 0
    path = content / "attention" / "watched.md"
    path.write_text(path.read_text().replace(f"{PLACEHOLDER} ", "Written "))
    env = {**os.environ, "QUIZLAB_CONTENT_DIR": str(content)}
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "check", "--watch", str(content)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while "Watching for changes" not in "".join(lines):
            lines.append(process.stdout.readline())
        assert "1 card file(s) checked, no problems" in "".join(lines)
        time.sleep(0.1)
        path.write_text(path.read_text().replace("## TL;DR", "## Tldr"))
        deadline = time.monotonic() + 10
        while "unknown section 'Tldr'" not in "".join(lines):
            assert time.monotonic() < deadline, lines
            lines.append(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()

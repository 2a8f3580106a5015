"""Code on cards that runs: ```` ```python run ```` blocks and their expected output.

A fenced block whose info string is ``python run`` must be followed by a fenced
``output`` block: ``quizlab check --run-code`` runs the code in a subprocess of
the checking Python (the worker's environment: torch and numpy), with a time
and memory limit and sockets refused, and compares what it prints with the
output block. A number written ``0.731 ± 0.001`` or ``4.2e-5 ± 5%`` in the
output matches any printed number within that tolerance; everything else must
match exactly (trailing spaces ignored). This never runs on the web server:
only the command line imports this module.
"""

import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from markdown_it.token import Token

from app.content.card import Problem
from app.content.library import card_files, display_path
from app.content.rendering import MARKDOWN

RUN_INFO = "python run"
OUTPUT_INFO = "output"
TIME_LIMIT_S = 60
MEMORY_LIMIT_BYTES = 8 * 2**30  # address space: torch maps far more than it uses
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TOLERANT = re.compile(rf"({_NUMBER})\s*(?:±|\+-)\s*({_NUMBER})(%?)")
# Run first in the child: no network, so a card's code cannot reach out.
_PRELUDE = """\
import socket as _socket
def _refuse(*args, **kwargs):
    raise OSError("network access is disabled for card code")
_socket.socket.connect = _refuse
_socket.socket.connect_ex = _refuse
_socket.create_connection = _refuse
del _socket, _refuse
"""


@dataclass(frozen=True)
class CodeBlock:
    code: str
    line: int
    expected: str | None  # None: no output block follows
    expected_line: int


def code_blocks(text: str) -> list[CodeBlock]:
    """Every ``python run`` block in a card file, with the output block after it."""
    tokens = MARKDOWN.parse(text, {})
    blocks = []
    for index, token in enumerate(tokens):
        if token.type != "fence" or token.info.strip() != RUN_INFO:
            continue
        after = _next_block(tokens, index)
        line = (token.map[0] if token.map else 0) + 1
        if after is not None and after.type == "fence" and after.info.strip() == OUTPUT_INFO:
            after_line = (after.map[0] if after.map else 0) + 1
            blocks.append(CodeBlock(token.content, line, after.content, after_line))
        else:
            blocks.append(CodeBlock(token.content, line, None, line))
    return blocks


def _next_block(tokens: list[Token], index: int) -> Token | None:
    return next((t for t in tokens[index + 1 :] if t.nesting >= 0 and t.map), None)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def run_block(code: str, timeout: float = TIME_LIMIT_S) -> tuple[str, str | None]:
    """Run one block; its output, and why it failed (None when it ran cleanly)."""
    try:
        result = subprocess.run(
            [sys.executable, "-I", "-c", _PRELUDE + code],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
            env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""},
            cwd="/",
        )
    except subprocess.TimeoutExpired:
        return "", f"ran longer than {timeout:g} s"
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        return result.stdout, f"exited with status {result.returncode}: {last}"
    return result.stdout, None


def output_mismatch(expected: str, actual: str) -> str | None:
    """Why ``actual`` does not match ``expected`` (with ``±`` tolerances), or None."""
    want = [line.rstrip() for line in expected.rstrip().splitlines()]
    got = [line.rstrip() for line in actual.rstrip().splitlines()]
    if len(want) != len(got):
        return f"printed {len(got)} line(s), the output block has {len(want)}"
    for number, (w, g) in enumerate(zip(want, got, strict=True), start=1):
        if not _line_matches(w, g):
            return f"output line {number} differs: expected {w!r}, got {g!r}"
    return None


def _line_matches(want: str, got: str) -> bool:
    parts = _TOLERANT.split(want)
    # split gives literal, number, tolerance, percent, literal, ...
    pattern = "".join(
        re.escape(part) if i % 4 == 0 else (f"({_NUMBER})" if i % 4 == 1 else "")
        for i, part in enumerate(parts)
    )
    match = re.fullmatch(pattern, got)
    if match is None:
        return False
    claims = [(float(parts[i]), float(parts[i + 1]), parts[i + 2]) for i in range(1, len(parts), 4)]
    for (claim, tolerance, percent), printed in zip(claims, match.groups(), strict=True):
        allowed = abs(claim) * tolerance / 100 if percent else tolerance
        if not math.isclose(float(printed), claim, abs_tol=allowed, rel_tol=0):
            return False
    return True


def code_problems(paths: list[Path]) -> list[Problem]:
    """Run every ``python run`` block under ``paths``; a problem for each that fails."""
    problems = []
    for path in card_files(paths):
        shown = display_path(path)
        for block in code_blocks(path.read_text(encoding="utf-8")):
            problems.extend(_block_problems(shown, block))
    return sorted(problems)


def _block_problems(path: str, block: CodeBlock) -> list[Problem]:
    if block.expected is None:  # reported by the check itself (app.content.mistakes)
        return []
    output, failure = run_block(block.code)
    if failure:
        return [Problem(path, block.line, f"code block {failure}")]
    mismatch = output_mismatch(block.expected, output)
    if mismatch:
        return [Problem(path, block.expected_line, f"code block output: {mismatch}")]
    return []

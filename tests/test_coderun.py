"""Code on cards runs: `python run` blocks, their output blocks, and the tolerances."""

from pathlib import Path

import pytest

from app.content.coderun import code_blocks, code_problems, output_mismatch, run_block
from app.settings import PROJECT_ROOT

CARD = """\
---
id: x
---

## Deep dive

```python run
print(1 / 3)
print("ok")
```

```output
0.333 ± 0.001
ok
```
"""


def test_blocks_and_their_output_are_found_with_lines() -> None:
    [block] = code_blocks(CARD)
    assert block.code == 'print(1 / 3)\nprint("ok")\n'
    assert (block.line, block.expected, block.expected_line) == (7, "0.333 ± 0.001\nok\n", 12)


@pytest.mark.parametrize(
    ("expected", "actual", "mismatch"),
    [
        ("0.333 ± 0.001\nok", "0.3333333\nok\n", None),
        ("4.2e-5 ± 5%", "4.3e-05", None),
        ("4.2e-5 ± 1%", "4.3e-05", "output line 1 differs: expected '4.2e-5 ± 1%', got '4.3e-05'"),
        ("tensor(0 ± 1e-06)", "tensor(1.0431e-07)", None),
        ("a  b", "a b", "output line 1 differs: expected 'a  b', got 'a b'"),
        ("one\ntwo", "one", "printed 1 line(s), the output block has 2"),
    ],
)
def test_output_is_compared_with_tolerances(
    expected: str, actual: str, mismatch: str | None
) -> None:
    assert output_mismatch(expected, actual) == mismatch


def test_a_failing_block_and_a_wrong_output_are_problems(tmp_path: Path) -> None:
    card = tmp_path / "deck" / "x.md"
    card.parent.mkdir()
    card.write_text(CARD.replace('print("ok")', 'print("not ok")'))
    [problem] = code_problems([card])
    assert problem.line == 12
    assert (
        problem.message == "code block output: output line 2 differs: expected 'ok', got 'not ok'"
    )
    card.write_text(CARD.replace("print(1 / 3)", "1 / 0"))
    [problem] = code_problems([card])
    assert problem.line == 7
    assert problem.message == "code block exited with status 1: ZeroDivisionError: division by zero"


def test_limits_time_and_network() -> None:
    assert run_block("import time; time.sleep(5)", timeout=0.5) == ("", "ran longer than 0.5 s")
    _output, failure = run_block("import socket; socket.create_connection(('127.0.0.1', 9))")
    assert failure is not None and "network access is disabled for card code" in failure
    _output, failure = run_block("x = bytearray(16 * 2**30)")
    assert failure is not None and "MemoryError" in failure


def test_a_bundled_card_runs_as_written() -> None:
    """One quick card here; CI runs every card (`quizlab check --strict --run-code`)."""
    card = PROJECT_ROOT / "content" / "attention" / "kv-cache-memory.md"
    assert code_blocks(card.read_text())
    assert code_problems([card]) == []

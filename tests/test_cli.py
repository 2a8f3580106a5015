"""The `quizlab` command line, run as a user runs it."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cardtext import GOOD_CARD, OTHER_CARD, line_of


def quizlab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_check_clean_content_exits_0(content_dir: Path) -> None:
    result = quizlab("check", str(content_dir))
    assert result.returncode == 0, result.stdout + result.stderr
    # The test cards are below the deck standard: warnings, which only --strict fails on.
    assert all(": warning: " in line for line in result.stdout.splitlines())
    assert "2 card file(s) checked, no problems, 4 warning(s)" in result.stderr
    strict = quizlab("check", "--strict", str(content_dir))
    assert strict.returncode == 1
    assert (
        f"scaling.md:{GOOD_CARD.splitlines().index('## Red flags') + 1}: "
        "only 2 in '## Red flags': the deck standard is 3 or more" in strict.stdout
    )


def test_check_prints_path_line_message_and_exits_1(content_dir: Path) -> None:
    broken = content_dir / "testdeck" / "other.md"
    text = OTHER_CARD.replace("Positive and smooth.\n", "")
    broken.write_text(text)
    result = quizlab("check", str(broken), cwd=content_dir.parent)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"content/testdeck/other.md:{line_of(text, '### Why exp?')}: follow-up 'Why exp?' has no body: write its approach"
    ]


def test_check_usage_error_exits_2(tmp_path: Path) -> None:
    result = quizlab("check", str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "no such file or folder" in result.stderr


def test_help_texts_explain_each_option() -> None:
    serve = quizlab("serve", "--help").stdout
    for option in ("--host", "--port", "--reload-content"):
        assert option in serve
    assert "Address to listen on" in serve
    check = quizlab("check", "--help").stdout
    assert "Exit status: 0" in check


def test_serve_reads_forwarded_headers_only_from_the_named_proxies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Unset, no X-Forwarded-For is believed: uvicorn's own default trusts 127.0.0.1,
    so anything on the machine could pick its address and dodge the sign-in limits."""
    import uvicorn
    from typer.testing import CliRunner

    from app.cli.commands import cli
    from app.settings import get_settings

    ran: list[dict[str, object]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: ran.append(options))
    monkeypatch.setenv("QUIZLAB_WORKER_URL", "http://127.0.0.1:9")  # start no local worker
    monkeypatch.setenv("QUIZLAB_DATA_DIR", str(tmp_path))
    for trusted in ("", "10.0.0.5"):
        if trusted:
            monkeypatch.setenv("FORWARDED_ALLOW_IPS", trusted)
        else:
            monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
        get_settings.cache_clear()
        result = CliRunner().invoke(cli, ["serve", "--no-reload-content"])
        assert result.exit_code == 0, result.output
    get_settings.cache_clear()
    assert [(o["proxy_headers"], o.get("forwarded_allow_ips")) for o in ran] == [
        (False, None),
        (True, "10.0.0.5"),
    ]

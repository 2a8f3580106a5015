"""Documentation that cannot fall behind the code."""

import re

from app.settings import PROJECT_ROOT, Settings
from app.worker.settings import WorkerSettings

README = (PROJECT_ROOT / "README.md").read_text()


def test_every_setting_is_in_the_readme() -> None:
    documented = set(re.findall(r"`(QUIZLAB_[A-Z_]+)`", README))
    missing = [f"QUIZLAB_{name.upper()}" for name in Settings.model_fields]
    missing += [f"QUIZLAB_WORKER_{name.upper()}" for name in WorkerSettings.model_fields]
    assert [name for name in missing if name not in documented] == []


def test_readme_gives_the_two_commands() -> None:
    blocks = re.findall(r"^    (\S.*)$", README, re.M)
    assert "make run" in blocks and "make test" in blocks

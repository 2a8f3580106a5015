"""`quizlab serve` as a real process: its local demo worker ends with it, however it ends."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT
from tests.conftest import healthy_within


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def children_of(pid: int) -> list[int]:
    """PIDs whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        # The command name is in parentheses and may hold spaces: split after it.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its exit status is left


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name
)
def test_the_local_worker_stops_with_the_server(tmp_path: Path, signum: signal.Signals) -> None:
    port = free_port()
    env = {**os.environ, "QUIZLAB_DATA_DIR": str(tmp_path / "data")}
    env.pop("QUIZLAB_WORKER_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port), "--no-reload-content"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert healthy_within(f"http://127.0.0.1:{port}", 120), "quizlab serve did not start"
        [worker] = children_of(server.pid)
        server.send_signal(signum)
        server.wait(timeout=30)
        assert gone_within(worker, 20), f"the worker outlived the server after {signum.name}"
    finally:
        for pid in [*children_of(server.pid), server.pid]:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
        server.wait(timeout=10)

"""A demo worker started as a child process: the embedded default.

With no ``QUIZLAB_WORKER_URL``, ``quizlab serve`` and ``quizlab check
--run-demos`` start one on a free loopback port, wait until ``/health``
answers, and stop it on exit. It is a separate process so the web server
never imports torch and a demo that exhausts memory cannot take the site down.
"""

import logging
import os
import socket
import subprocess
import sys
import time
from types import TracebackType

import httpx

logger = logging.getLogger(__name__)

# Start-up imports torch, SciPy and scikit-learn and runs every demo once
# (the warm-up): about 10 s of CPU. On a 2-core machine shared with other jobs
# that has taken more than 90 s of wall time, and a worker abandoned then left
# the whole site without live numbers, so the wait is generous; it ends as
# soon as /health answers.
START_TIMEOUT = 300.0


class LocalWorkerError(RuntimeError):
    """The local worker could not be started; the message says why."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


class LocalWorker:
    """``with LocalWorker() as url:`` runs a worker for the block's duration."""

    def __init__(self, *, port: int | None = None, log_level: str = "warning") -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_level = log_level
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        if not torch_installed():
            raise LocalWorkerError(
                "torch is not installed, so no local demo worker can start: "
                "install the 'worker' extra or set QUIZLAB_WORKER_URL"
            )
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "app.worker.api:create_worker_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            self.log_level,
        ]
        # The worker stops itself when this process ends, however it ends
        # (app/worker/parent.py): stop() below is not reached after a SIGKILL.
        env = {**os.environ, "QUIZLAB_WORKER_PARENT_PID": str(os.getpid())}
        self.process = subprocess.Popen(command, env=env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalWorkerError(f"the local worker exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    logger.info("local demo worker at %s", self.url)
                    return self.url
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise LocalWorkerError(f"the local worker did not answer within {START_TIMEOUT:.0f} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

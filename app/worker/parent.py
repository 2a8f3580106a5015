"""Exit when the process that started the worker is gone.

``quizlab serve`` starts a local worker as a child. However the server ends
(Ctrl+C, ``kill``, systemd's SIGTERM, SIGHUP, a crash or SIGKILL), the worker
must not outlive it holding hundreds of MB: uvicorn re-raises SIGTERM after
its own shutdown, so the server's ``finally`` that stops the worker does not
always run. Instead the worker watches its parent: when it is re-parented
(its parent ended), it stops itself gracefully.
"""

import asyncio
import logging
import os
import signal

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5


def parent_alive(parent_pid: int) -> bool:
    """Whether ``parent_pid`` is still this process's parent."""
    return os.getppid() == parent_pid


async def exit_with_parent(parent_pid: int, poll: float = POLL_SECONDS) -> None:
    """Wait until the parent is gone, then ask this process to stop (SIGTERM)."""
    while parent_alive(parent_pid):  # noqa: ASYNC110 (polls the OS: no event to await)
        await asyncio.sleep(poll)
    logger.warning("the process that started this worker (%d) ended: stopping", parent_pid)
    os.kill(os.getpid(), signal.SIGTERM)

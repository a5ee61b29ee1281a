"""Keeping a benchmark's commands off the user's recall: a private home, and a clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def private_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment with recall's configuration, state and cache under
    ``home``, commands run in process (``RECALL_DAEMON=0``) and no server named;
    ``extra`` adds or overrides variables."""
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "RECALL_DAEMON": "0",
        **extra,
    }
    env.pop("RECALL_SERVER", None)
    return env


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """End a server started in its own session with SIGTERM, and its whole group with
    SIGKILL if it has not exited within 15 s."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

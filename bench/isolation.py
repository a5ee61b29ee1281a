"""Keeping a benchmark's commands off the user's recall: a private home, a clean stop, and
the checkout's bytecode written before anything is timed."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


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


def write_bytecode() -> None:
    """Compile the checkout's modules first, as installing a package does: a source file
    newer than its cached bytecode is compiled again by every process that imports it
    while PYTHONDONTWRITEBYTECODE is set, which would time the compiler, not recall."""
    import compileall

    for package in ("broker", "adapter_sdk", "adapters"):
        compileall.compile_dir(str(REPO / package), quiet=1)

"""Servers a fixture's store started and left running: found by ``runtime.json``, stopped with it.

Some stores start a detached server on first use and record it in the store
as ``runtime.json`` holding ``{"pid": N}`` (Polign Recall's local data
directories do). That server outlives the adapter and its process group. A
case's fixture copy (``writable_fixture``) is a store recall itself made, so
when the copy goes its server goes too; a server wrongly started in a fixture
read in place is stopped the same way. Only runtime files under the folder
given are read, and a pid is signalled only while its command line names that
very runtime file, so a user's own store's server, or a process that later
reused the pid, is left alone.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

RUNTIME_FILE = "runtime.json"
STOP_GRACE = 5.0
_POLL = 0.02


def stop_recorded_servers(root: Path, grace: float = STOP_GRACE) -> list[int]:
    """Stop each server recorded under ``root``; the pids stopped."""
    stopped = []
    for runtime in sorted(root.rglob(RUNTIME_FILE)):
        pid = _recorded_pid(runtime)
        if pid is not None and _names(pid, runtime):
            _stop(pid, grace)
            stopped.append(pid)
    return stopped


def _recorded_pid(runtime: Path) -> int | None:
    try:
        pid = json.loads(runtime.read_text()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _names(pid: int, runtime: Path) -> bool:
    """Whether process ``pid`` is running with ``runtime`` among its arguments."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    wanted = os.path.realpath(runtime)
    return any(arg and os.path.realpath(os.fsdecode(arg)) == wanted for arg in argv[1:])


def _stop(pid: int, grace: float) -> None:
    """SIGTERM, which lets the server release its store cleanly; SIGKILL if it lingers."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    give_up = time.monotonic() + grace
    while running(pid):
        if time.monotonic() > give_up:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        time.sleep(_POLL)


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie awaiting its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"

"""Stop the polign-server a replayed eventstore case leaves behind.

Polign's ``recall mcp`` starts a detached ``polign-server`` for a local data
directory, and that server outlives the adapter and the replay's process
group. Replaying a case copies its fixture into a scratch directory named
``recall-conformance-<case>-*``; the server started for that copy is found
by its ``-runtime-file`` argument, stopped by pid, and the scratch directory
(which the server may have kept writing into) is removed.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER_NAME = b"polign-server"
RUNTIME_FLAG = b"-runtime-file"
STOP_GRACE = 5.0


@contextmanager
def store_servers_stopped(case: str) -> Iterator[None]:
    """Around one case's replay: afterwards stop servers started for that case's copy."""
    before = _pids()
    try:
        yield
    finally:
        for pid, run_root in _case_servers(f"recall-conformance-{case}-"):
            if pid not in before:
                _stop(pid)
                shutil.rmtree(run_root, ignore_errors=True)


def _pids() -> set[int]:
    return {int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()}


def _case_servers(prefix: str) -> Iterator[tuple[int, Path]]:
    for pid in _pids():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv[0].endswith(SERVER_NAME) or RUNTIME_FLAG not in argv:
            continue
        runtime = Path(os.fsdecode(argv[argv.index(RUNTIME_FLAG) + 1]))
        run_root = runtime.parent.parent  # <run root>/fixture/runtime.json
        if run_root.name.startswith(prefix):
            yield pid, run_root


def _stop(pid: int) -> None:
    """SIGTERM, which lets Polign release its lease; SIGKILL if it lingers."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    give_up = time.monotonic() + STOP_GRACE
    while _running(pid):
        if time.monotonic() > give_up:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        time.sleep(0.02)


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie awaiting its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"

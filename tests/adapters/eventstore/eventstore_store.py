"""A real Polign Recall store: what the tests seed, and how its server is stopped."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.eventstore.binary import PolignBinary, find_polign_server

VIM_AT = "2026-01-01T10:00:00Z"
NEOVIM_AT = "2026-06-01T10:00:00Z"
BETWEEN = "2026-03-01T00:00:00Z"
POSTGRES_AT = "2026-02-01T10:00:00Z"
REDIS_AT = "2026-02-02T10:00:00Z"
NOTE_AT = "2026-02-03T10:00:00Z"
FLY_AT = "2026-02-04T10:00:00Z"
SERVE_KEY = "rcl_eventstoretest_0123456789abcdef0123456789abcdef"
NOTE_TEXT = "the editor config lives in the dotfiles repository"


@dataclass
class SeededStore:
    directory: Path
    vim_event: str
    neovim_event: str
    redis_event: str


def open_client(directory: Path, binary: PolignBinary) -> Any:
    """Polign's own client, writing typed statements into a local data directory."""
    from polign_recall import Client

    path = os.environ.get("PATH", "")
    server_dir = find_polign_server(None, binary)
    env = {"PATH": os.pathsep.join(filter(None, (server_dir, path)))}
    with pytest.MonkeyPatch.context() as patch:
        # Polign's client runs RECALL_BIN, else the first `recall` it sees,
        # which in this environment may be this project's own CLI.
        patch.setenv("RECALL_BIN", binary.path)
        return Client(local_dir=directory, typed=True, write=True, env=env, timeout=30)


def stop_store_server(directory: Path, grace: float = 2.0) -> None:
    """Stop the polign-server Polign started for ``directory`` (its pid is in runtime.json)."""
    pid = store_server_pid(directory)
    if pid is None:
        return
    _signal(pid, signal.SIGTERM)
    give_up = time.monotonic() + grace
    while running(pid) and time.monotonic() < give_up:
        time.sleep(0.05)
    if running(pid):
        _signal(pid, signal.SIGKILL)


def crash_store_server(directory: Path) -> None:
    """Kill the store's polign-server outright, leaving its runtime.json behind."""
    pid = store_server_pid(directory)
    assert pid is not None, f"no polign-server runs for {directory}"
    _signal(pid, signal.SIGKILL)
    while running(pid):
        time.sleep(0.02)


def store_server_pid(directory: Path) -> int | None:
    try:
        return int(json.loads((directory / "runtime.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie awaiting its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"

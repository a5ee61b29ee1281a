"""A configuration on disk and ``recall`` run with the resident broker switched on.

Profiles: ``default`` (the real notes adapter and a fixture task list),
``degraded`` (notes and a source that answers source_unavailable) and
``failed`` (one source whose adapter exits mid-search). The runtime folder is
a short private folder of its own, so each test's brokers are its own; the
fixture stops every broker a test started and checks that none is left.

A command that finds no broker runs in process and starts one in the background
as it ends: ``start()`` starts one at once (``recall daemon start``), and
``started_broker()`` waits for the one the last command started.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.fixture_config import (
    FIXTURE_ADAPTER,
    adapter_registration,
    settings_table,
    source_table,
)

RECALL = str(Path(sys.executable).parent / "recall")
RESTORE_NOTE = "# Restore drill\n\nRestore the newest snapshot and compare checksums.\n"
TASK = {"id": "t1", "title": "Run the quarterly restore drill", "body": "Owner rotates."}
WAIT_SECONDS = 30.0


@dataclass
class Resident:
    root: Path
    env: dict[str, str]
    runtime: Path
    adapter_script: Path
    config_file: Path
    started: set[int] = field(default_factory=set)

    def recall(
        self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [RECALL, *args], capture_output=True, text=True, env={**self.env, **(env or {})},
            cwd=self.root, timeout=120, input=stdin,
        )
        self.started |= set(broker_pids(self.runtime))
        return done

    def cold(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.recall(*args, env={"RECALL_DAEMON": "0"}, stdin=stdin)

    def status(self) -> dict:
        done = self.recall("daemon", "status", "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def pid(self) -> int:
        state = self.status()
        assert state["running"], "no resident broker is running"
        return int(state["pid"])

    def start(self) -> int:
        """Start the broker now, as 'recall daemon start' does: its pid."""
        done = self.recall("daemon", "start", "--json")
        assert done.returncode == 0, done.stderr
        return int(json.loads(done.stdout)["pid"])

    def started_broker(self) -> int:
        """The pid of the broker a command started in the background, once it listens."""
        self.wait_for_starts()
        return self.pid()

    def wait_for_starts(self) -> None:
        """Until every broker a command started in the background listens (or has failed)."""
        wait_for_starts(self.runtime)
        self.started |= set(broker_pids(self.runtime))

    def sockets(self) -> list[Path]:
        folder = self.runtime / "recall"
        return sorted(folder.glob("*.sock")) if folder.is_dir() else []


def broker_pids(runtime: Path) -> list[int]:
    """Processes running 'recall daemon run' with a socket in ``runtime``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"daemon" in argv and b"run" in argv and any(str(runtime).encode() in a for a in argv):
            pids.append(int(entry.name))
    return pids


def wait_for_starts(runtime: Path, seconds: float = WAIT_SECONDS) -> None:
    """Until no command is starting a broker under ``runtime``: each start holds its lock
    file until its broker listens or has failed."""
    deadline = time.monotonic() + seconds
    for lock_file in sorted((runtime / "recall").glob("*.lock")):
        with open(lock_file, "rb") as lock:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    assert time.monotonic() < deadline, f"a broker start held {lock_file} for {seconds}s"
                    time.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has ended; only its parent has not looked yet
        return (Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]) != "Z"
    except OSError:
        return False


def wait_gone(pid: int, seconds: float = WAIT_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def write_config(root: Path, adapter_script: Path) -> Path:
    config_dir = root / "config" / "recall"
    config_dir.mkdir(parents=True)
    (root / "kb").mkdir()
    (root / "kb" / "restore.md").write_text(RESTORE_NOTE)

    def records(name: str, items: list[dict]) -> Path:
        path = root / f"{name}.json"
        path.write_text(json.dumps({"records": items}))
        return path

    keys = {"location_kind": "path", "sensitivity": "internal", "timeout_ms": 5000}
    lines = adapter_registration(script=adapter_script)
    lines += [*source_table("UIDKB000000000001", "kb", "notes", root / "kb", **keys), ""]
    lines += [*source_table("UIDTASKS00000001", "tasks", "fixture", records("tasks", [TASK]), **keys), ""]
    lines += [*source_table("UIDBROKEN0000001", "broken", "fixture", records("broken", [TASK]), **keys),
              *settings_table({"fail": "error"}), ""]
    lines += [*source_table("UIDCRASHY0000001", "crashy", "fixture", records("crashy", [TASK]), **keys),
              *settings_table({"fail": "crash"}), ""]
    lines += ["[profiles.default]", 'sources = ["kb", "tasks"]', 'max_sensitivity = "internal"', ""]
    lines += ["[profiles.degraded]", 'sources = ["kb", "broken"]', 'max_sensitivity = "internal"', ""]
    lines += ["[profiles.failed]", 'sources = ["crashy"]', 'max_sensitivity = "internal"', ""]
    config_file = config_dir / "config.toml"
    config_file.write_text("\n".join(lines))
    return config_file


@pytest.fixture
def resident(tmp_path: Path) -> Iterator[Resident]:
    runtime = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: socket paths are bounded
    adapter_script = tmp_path / "fixture_adapter.py"
    shutil.copy(FIXTURE_ADAPTER, adapter_script)
    config_file = write_config(tmp_path, adapter_script)
    env = {
        **os.environ,
        "RECALL_DAEMON": "1",
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    env.pop("RECALL_SERVER", None)
    workspace = Resident(tmp_path, env, runtime, adapter_script, config_file)
    try:
        yield workspace
    finally:
        wait_for_starts(runtime)
        workspace.started |= set(broker_pids(runtime))
        for pid in workspace.started:
            if alive(pid):
                os.kill(pid, signal.SIGTERM)
        left = [pid for pid in workspace.started if not wait_gone(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)
        assert not left, f"resident brokers outlived their test: {left}"

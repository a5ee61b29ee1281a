"""An adapter dies with its broker, even one that ignores the end of its stdin."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from tests.broker.warm.conftest import Resident, alive, wait_gone
from tests.support.fixture_config import settings_table, source_table

ENVIRONMENT_ADAPTER = Path(__file__).resolve().parents[2] / "fixtures" / "environment_adapter.py"
GONE_WITHIN = 5.0


def adapter_pids(pidfile: Path, seconds: float = 30.0) -> list[int]:
    """The pids the adapter wrote, waiting for the first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pidfile.exists() and (pids := [int(line) for line in pidfile.read_text().split()]):
            return pids
        time.sleep(0.05)
    raise AssertionError(f"no adapter wrote its pid to {pidfile} within {seconds}s")


def test_an_adapter_that_ignores_the_end_of_its_stdin_dies_with_a_killed_broker(resident: Resident) -> None:
    pidfile = resident.root / "adapter.pids"
    resident.config_file.write_text("\n".join([
        "[adapters.stubborn]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(ENVIRONMENT_ADAPTER))}]",
        'freshness_modes = ["live"]',
        f"env = {{ FAULT_PIDFILE = {json.dumps(str(pidfile))} }}",
        "",
        *source_table("UIDSTUBBORN00001", "stubborn", "stubborn", resident.root, location_kind="path",
                      sensitivity="internal", timeout_ms=5000),
        *settings_table({"outlive_stdin": True}),
        "",
        "[profiles.default]",
        'sources = ["stubborn"]',
        'max_sensitivity = "internal"',
    ]) + "\n")
    broker = resident.start()
    pids: list[int] = []
    try:
        answered = resident.recall("query", "HOME", "--json")
        assert answered.returncode == 0, answered.stderr
        assert resident.status()["commands_served"] == 1
        pids = adapter_pids(pidfile)
        assert all(alive(pid) for pid in pids)

        os.kill(broker, signal.SIGKILL)
        assert wait_gone(broker)
        survivors = [pid for pid in pids if not wait_gone(pid, GONE_WITHIN)]
        assert not survivors, f"adapters outlived their broker by {GONE_WITHIN}s: {survivors}"
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

"""Every adapter process is reaped while the event loop runs, however its end came about.

A child whose exit is reported after the loop closed makes asyncio print
"Loop ... that handles pid N is closed" on the user's terminal; one reaped
behind the loop's back, "Unknown child process pid N". The scenarios
run under a child watcher that reports exits late, as a loaded machine does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize("scenario", ["cancelled_spawn", "dead_before_stop"])
def test_no_exit_is_reported_to_a_closed_loop(tmp_path: Path, scenario: str) -> None:
    run = subprocess.run(
        [sys.executable, str(HERE / "late_reaper.py"), scenario, str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=HERE.parents[2],
    )
    assert run.returncode == 0, run.stderr
    assert "that handles pid" not in run.stderr
    assert "Unknown child process" not in run.stderr  # reaped behind the loop's back
    for pid in [int(p) for p in run.stdout.split()]:
        assert not Path(f"/proc/{pid}").exists(), f"adapter {pid} was left behind"

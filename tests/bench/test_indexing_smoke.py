"""bench/indexing.py runs end to end on a tiny folder and reports every measure.

Not a timed test: only the report's shape and what the run must have seen are checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(200)
def test_indexing_smoke_run_reports_every_measure(tmp_path: Path) -> None:
    out = tmp_path / "indexing.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "indexing.py"), "--smoke",
         "--json-out", str(out), "--workdir", str(tmp_path / "work")],
        capture_output=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    smoke = json.loads(out.read_text())["sizes"]["smoke"]
    assert set(smoke) >= {"build", "cold_edit", "warm_edit", "concurrent", "bulk_edit", "peak_rss_mb"}
    assert (smoke["build"]["indexed"], smoke["build"]["coverage"]) == (300, "complete")
    cold = smoke["cold_edit"]
    assert cold["rename"]["found"] and cold["in_place_recent"]["found"], json.dumps(cold, indent=1)
    assert smoke["watched"] is True
    assert smoke["bulk_edit"]["complete_after_s"] is not None
    assert b"first build via refresh" in done.stdout

"""The benchmark script runs end to end on a tiny corpus and reports every measure.

Not a timed test: only the shape of the JSON report is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_smoke_run_writes_every_measure_to_the_json_report(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--smoke",
         "--json-out", str(out), "--workdir", str(tmp_path / "work")],
        capture_output=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(out.read_text())

    assert set(report) >= {"machine", "help", "sizes"}
    assert report["help"]["median_ms"] > 0
    smoke = report["sizes"]["smoke"]
    assert set(smoke["refresh"]) >= {"full_ms", "incremental_ms", "incremental_source_ms"}
    assert set(smoke["cold_query"]) >= {
        "median_ms", "p95_ms", "cpu_ms", "exit_codes", "overhead_ms",
        "peak_rss_process_mb", "peak_rss_tree_mb",
    }
    assert smoke["cold_query"]["exit_codes"] == [0]
    assert set(smoke["serve"]) >= {"p50_ms", "p95_ms", "overhead_ms", "resident_cli_median_ms"}
    assert smoke["serve"]["sources"] == 4
    assert smoke["serve"]["outcomes"] == ["answered"]
    resident = smoke["resident"]
    assert set(resident) >= {
        "cold_median_ms", "resident_median_ms", "serve_errors", "serve_p95_ms",
        "cold_peak_rss_tree_mb", "serve_peak_rss_tree_mb", "first_command_ms", "after_start_ms",
        "serve_watched_p95_ms", "serve_watched_after_s",
    }
    assert resident["resident_exit_codes"] == [0]
    assert resident["serve_errors"] == resident["serve_watched_errors"] == 0
    assert b"cold query" in done.stdout
    assert b"resident query (CLI wall)" in done.stdout

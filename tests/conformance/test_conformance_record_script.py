from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from adapter_sdk.conformance import replay_suite

from .sample_cases import ARGV, CASES

REPO = Path(__file__).resolve().parents[2]


def test_record_script_writes_a_suite_that_replays(tmp_path: Path) -> None:
    suite = tmp_path / "sample"
    done = subprocess.run(
        [
            sys.executable, str(REPO / "conformance_transcripts" / "record.py"), "sample",
            str(REPO / "tests" / "conformance" / "sample_cases.py"), "--out", str(suite),
            "--only", "handshake", "search-ranked",
        ],
        capture_output=True, text=True, timeout=60,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 of 2 cases" in done.stdout
    assert [r.passed for r in replay_suite(suite, ARGV)] == [True, True]


def test_record_script_refuses_an_unknown_case(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable, str(REPO / "conformance_transcripts" / "record.py"), "sample",
            str(REPO / "tests" / "conformance" / "sample_cases.py"), "--out", str(tmp_path),
            "--only", "no-such-case",
        ],
        capture_output=True, text=True, timeout=60,
    )

    assert done.returncode == 2
    assert "no-such-case" in done.stderr
    assert {case.name for case in CASES}.isdisjoint(p.name for p in tmp_path.iterdir())

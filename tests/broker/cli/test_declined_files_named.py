"""Every surface that reports on a source names the files its settings kept out.

``recall sources`` always listed them; ``recall doctor`` and ``recall query
--explain`` now name each declined file too, with its reason and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.recall_home import RecallHome, write_note

BIG = "big-export.md"


def _home(tmp_path: Path) -> RecallHome:
    folder = tmp_path / "kb"
    write_note(folder, "restore.md", "# Restore drill\n\nRestore the newest snapshot.\n", modified="2024-01-02")
    write_note(folder, BIG, "# Export\n\n" + "restore drill " * 100_000, modified="2024-01-02")  # over 1 MB
    return RecallHome.build(tmp_path, notes={"notes": folder})


def test_doctor_and_query_explain_name_the_declined_file_as_sources_does(tmp_path: Path) -> None:
    home = _home(tmp_path)
    listed = home.recall("sources")
    assert f"{BIG}: larger than max_file_bytes" in listed.stdout, listed.stdout

    doctor = home.recall("doctor")
    assert f"note: notes declined {BIG}: larger than max_file_bytes" in doctor.stdout, doctor.stdout
    assert "fix: raise max_file_bytes" in doctor.stdout
    serving = next(c for c in home.recall("doctor", "--json").json["checks"] if c["name"] == "serving")
    assert any(BIG in remark for remark in serving["remarks"])

    explained = home.recall("query", "--explain", "restore", "drill")
    assert explained.code == 0, explained.stdout + explained.stderr
    ledger = explained.stdout.split("\nsources\n", 1)[1]
    assert "  declined:\n" in ledger
    assert f"    {BIG}: larger than max_file_bytes" in ledger
    report = json.loads(home.recall("query", "--json", "--explain", "restore", "drill").stdout)
    notes = next(r for r in report["source_outcomes"] if r["source_id"] == "notes")
    assert [item["path"] for item in notes["diagnostics"]["declined"]] == [BIG]

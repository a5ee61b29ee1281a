"""The command: exit codes, the human layout and the JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Home, profile, records, source

ORDER = [
    "configuration",
    "trust_boundary",
    "identity",
    "access",
    "requirements",
    "health",
    "serving",
    "store_isolation",
    "freshness",
    "lineage",
    "abstention",
]


def test_a_sound_installation_exits_0_with_one_block_per_check(home: Home, tmp_path: Path) -> None:
    home.write_user(source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "alpha")), profile("notes"))
    done = home.recall("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    blocks = done.stdout.split("\n\n")
    assert blocks[0] == "status ok  profile default"
    heads = [block.splitlines()[0] for block in blocks[1:]]
    assert [head.split()[0] for head in heads] == ORDER
    assert heads[3] == "access         pass"
    assert heads[7] == "store_isolation pass"
    assert blocks[4].splitlines()[1] == "  1 of 1 eligible sources name a local path"


def test_a_degraded_source_exits_3(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), coverage="partial"),
        profile("notes"),
    )
    done = home.recall("doctor")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("status degraded  profile default  degraded checks 1\n")
    assert "serving        degraded\n" in done.stdout
    assert "  - source notes\n    coverage partial (base_prior 1)" in done.stdout


def test_any_failed_check_exits_1_even_beside_a_degraded_one(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), coverage="partial"),
        source("gone", "UIDGONE00001", tmp_path / "missing.json"),
        profile("notes", "gone"),
    )
    done = home.recall("doctor")
    assert done.returncode == 1
    assert done.stdout.startswith("status failed  profile default  failed checks 1  degraded checks 1\n")


def test_json_reports_status_profile_checks_and_counts(home: Home, tmp_path: Path) -> None:
    file = home.write_user(source("notes", "UIDNOTES0001", tmp_path / "missing.json"), profile("notes"))
    done = home.recall("doctor", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert list(report) == ["status", "profile", "checks", "failed_checks", "degraded_checks"]
    assert (report["status"], report["profile"], report["failed_checks"], report["degraded_checks"]) == (
        "failed",
        "default",
        1,
        0,
    )
    assert [c["name"] for c in report["checks"]] == ORDER
    access = report["checks"][3]
    assert access["status"] == "fail"
    assert access["detail"] == "1 of 1 eligible sources name a local path"
    assert access["problems"] == [
        {
            "file": str(file),
            "key": "location",
            "source_id": "notes",
            "message": f"location {tmp_path / 'missing.json'} cannot be read: No such file or directory",
        }
    ]


def test_json_for_a_configuration_that_does_not_load_has_no_profile(home: Home) -> None:
    home.write_user("[[sources]\n")
    done = home.recall("doctor", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert "profile" not in report
    assert report["checks"][0]["status"] == "fail"
    assert {c["status"] for c in report["checks"][1:]} == {"skipped"}

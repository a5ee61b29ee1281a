"""Access, requirements, health, serving, store isolation, freshness and lineage."""

from __future__ import annotations

import sys
from pathlib import Path

from broker.doctor import CheckName, CheckStatus, DiagnosisStatus

from .conftest import Home, profile, records, source


def test_a_good_configuration_passes_or_skips_every_check(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "alpha"), store_identity="dir:a"),
        source("tasks", "UIDTASKS0001", records(tmp_path / "t.json", "beta"), store_identity="dir:b"),
        profile("notes", "tasks"),
    )
    diagnosis = home.diagnose()
    statuses = {c.name: c.status for c in diagnosis.checks}
    assert set(statuses.values()) <= {CheckStatus.passed, CheckStatus.skipped}
    assert statuses[CheckName.health] is CheckStatus.passed
    assert diagnosis.check(CheckName.health).detail == "2 of 2 eligible sources answered a health probe"
    assert diagnosis.status is DiagnosisStatus.ok and diagnosis.exit_code == 0


def test_a_path_location_that_does_not_exist_fails_access(home: Home, tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "notes.json"
    file = home.write_user(source("notes", "UIDNOTES0001", missing), profile("notes"))
    access = home.diagnose().check(CheckName.access)
    assert access.status is CheckStatus.failed
    problem = access.problems[0]
    assert (problem.source_id, problem.key, problem.file) == ("notes", "location", str(file))
    assert str(missing) in problem.message


def test_a_disabled_source_is_not_checked(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", tmp_path / "gone.json", extra="enabled = false"),
        profile("notes"),
    )
    diagnosis = home.diagnose()
    assert diagnosis.check(CheckName.access).status is CheckStatus.passed
    assert diagnosis.check(CheckName.health).detail == "0 of 0 eligible sources answered a health probe"


def test_an_executable_requirement_not_on_path_fails_requirements(home: Home, tmp_path: Path) -> None:
    wanted = [{"name": "taskwarrior", "command": "recall-doctor-no-such-program"}]
    home.write_user(source("tasks", "UIDTASKS0001", records(tmp_path / "t.json"), requirements=wanted), profile("tasks"))
    check = home.diagnose().check(CheckName.requirements)
    assert check.status is CheckStatus.failed
    assert check.problems[0].source_id == "tasks"
    assert "recall-doctor-no-such-program" in check.problems[0].message


def test_an_executable_requirement_on_path_passes(home: Home, tmp_path: Path) -> None:
    wanted = [{"name": "python", "command": sys.executable}]
    home.write_user(source("tasks", "UIDTASKS0001", records(tmp_path / "t.json"), requirements=wanted), profile("tasks"))
    check = home.diagnose().check(CheckName.requirements)
    assert check.status is CheckStatus.passed
    assert check.detail == "1 executable requirement declared by eligible sources"


def test_an_unavailable_health_fails_health(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), health="unavailable"),
        profile("notes"),
    )
    health = home.diagnose().check(CheckName.health)
    assert health.status is CheckStatus.failed
    assert health.problems[0].source_id == "notes"
    assert "health is unavailable" in health.problems[0].message


def test_an_adapter_that_cannot_start_fails_health(home: Home, tmp_path: Path) -> None:
    home.write_user(
        '[adapters.ghost]\ncommand = "/nonexistent/recall-ghost"\nfreshness_modes = ["live"]\n',
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), adapter="ghost"),
        profile("notes"),
    )
    diagnosis = home.diagnose()
    health = diagnosis.check(CheckName.health)
    assert health.status is CheckStatus.failed
    assert health.problems[0].source_id == "notes"
    assert diagnosis.check(CheckName.serving).detail == "0 of 0 probed sources are serving their whole corpus"


def test_a_partial_index_degrades_serving(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source(
            "notes", "UIDNOTES0001", records(tmp_path / "n.json"),
            health="degraded", coverage="partial", record_count=10, indexed_count=7, failed_count=3,
        ),
        profile("notes"),
    )
    diagnosis = home.diagnose()
    serving = diagnosis.check(CheckName.serving)
    assert serving.status is CheckStatus.degraded
    message = serving.problems[0].message
    for shortfall in ("health degraded", "coverage partial", "7 of 10 records indexed", "3 records failed"):
        assert shortfall in message
    assert diagnosis.check(CheckName.health).status is CheckStatus.passed
    assert diagnosis.status is DiagnosisStatus.degraded and diagnosis.exit_code == 3


def test_a_partial_checkpoint_source_is_told_how_to_refresh(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), coverage="partial", checkpoint=True),
        profile("notes"),
    )
    serving = home.diagnose().check(CheckName.serving)
    assert "recall refresh --source notes" in serving.problems[0].message


def test_two_sources_of_one_adapter_over_one_store_fail_store_isolation(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), store_identity="dir:same"),
        source("mirror", "UIDMIRROR001", records(tmp_path / "m.json"), store_identity="dir:same"),
        profile("notes", "mirror"),
    )
    check = home.diagnose().check(CheckName.store_isolation)
    assert check.status is CheckStatus.failed
    assert len(check.problems) == 1
    assert "sources notes, mirror opened the same probe store" in check.problems[0].message
    assert "dir:same" in check.problems[0].message


def test_a_store_named_by_different_adapters_is_not_a_conflict(home: Home, tmp_path: Path) -> None:
    home.write_user(
        "[adapters.other]\n"
        f'command = "{sys.executable}"\n'
        f'args = ["{Path(__file__).parent / "doctor_adapter.py"}"]\n'
        'freshness_modes = ["live"]\n',
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), store_identity="dir:same"),
        source("mirror", "UIDMIRROR001", records(tmp_path / "m.json"), adapter="other", store_identity="dir:same"),
        profile("notes", "mirror"),
    )
    check = home.diagnose().check(CheckName.store_isolation)
    assert check.status is CheckStatus.passed
    assert check.detail == "2 of 2 probed sources named the store they opened, 2 distinct stores"


def test_a_freshness_mode_the_manifest_does_not_serve_fails_freshness(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), freshness_modes=["indexed"]),
        profile("notes"),
    )
    check = home.diagnose().check(CheckName.freshness)
    assert check.status is CheckStatus.failed
    assert {p.key for p in check.problems} == {"freshness_mode", "adapters.probe.freshness_modes"}


def test_a_source_level_derivation_cycle_fails_lineage(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), derives_from="digest"),
        source("digest", "UIDDIGEST001", records(tmp_path / "d.json"), derives_from="notes"),
        profile("notes", "digest"),
    )
    check = home.diagnose().check(CheckName.lineage)
    assert check.status is CheckStatus.failed
    assert len(check.problems) == 1
    assert "digest -> notes -> digest" in check.problems[0].message


def test_an_upstream_that_is_not_configured_is_noted_not_failed(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json"), derives_from="jira"),
        profile("notes"),
    )
    check = home.diagnose().check(CheckName.lineage)
    assert check.status is CheckStatus.passed
    assert "notes -> jira" in check.detail

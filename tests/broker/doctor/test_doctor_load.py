"""Configuration, trust boundary and identity: a configuration that does not load."""

from __future__ import annotations

from broker.doctor import CheckName, CheckStatus, DiagnosisStatus
from broker.doctor.diagnosis import LIVE_CHECKS

from .conftest import Home, profile, records, source


def test_malformed_toml_fails_configuration_and_skips_every_later_check(home: Home) -> None:
    file = home.write_user("[[sources]\nsource_id = ")
    diagnosis = home.diagnose()
    configuration = diagnosis.check(CheckName.configuration)
    assert configuration.status is CheckStatus.failed
    assert configuration.problems[0].file == str(file)
    assert "malformed TOML" in configuration.problems[0].message
    later = [c for c in diagnosis.checks if c.name in LIVE_CHECKS]
    assert [c.name for c in later] == list(LIVE_CHECKS)
    assert {c.status for c in later} == {CheckStatus.skipped}
    assert diagnosis.status is DiagnosisStatus.failed and diagnosis.exit_code == 1


def test_project_file_declaring_a_command_fails_the_trust_boundary(home: Home, tmp_path) -> None:
    home.write_user(source("notes", "UIDNOTES0001", records(tmp_path / "n.json")), profile("notes"))
    project = home.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "probe"\nlocation = "."\ncommand = "/tmp/evil"\n'
    )
    diagnosis = home.diagnose()
    trust = diagnosis.check(CheckName.trust_boundary)
    assert trust.status is CheckStatus.failed
    assert trust.problems[0].file == str(project)
    assert trust.problems[0].key == "sources[0].command"
    assert diagnosis.check(CheckName.health).status is CheckStatus.skipped


def test_a_project_file_inside_the_boundary_is_named_by_a_passing_trust_check(home: Home, tmp_path) -> None:
    home.write_user(source("notes", "UIDNOTES0001", records(tmp_path / "n.json")), profile("notes"))
    project = home.write_project('[[sources]]\nsource_id = "notes"\nbase_prior = 1.5\n')
    trust = home.diagnose().check(CheckName.trust_boundary)
    assert trust.status is CheckStatus.passed
    assert str(project) in trust.detail


def test_two_sources_claiming_one_uid_fail_identity(home: Home, tmp_path) -> None:
    data = records(tmp_path / "n.json")
    home.write_user(
        source("notes", "UIDSHARED001", data), source("more", "UIDSHARED001", data), profile("notes", "more")
    )
    diagnosis = home.diagnose()
    identity = diagnosis.check(CheckName.identity)
    assert identity.status is CheckStatus.failed
    assert identity.problems[0].source_id == "more"
    assert "UIDSHARED001" in identity.problems[0].message
    assert diagnosis.check(CheckName.configuration).status is CheckStatus.skipped


def test_a_source_without_a_uid_fails_identity(home: Home, tmp_path) -> None:
    home.write_user(
        '[[sources]]\nsource_id = "notes"\nadapter = "probe"\n'
        f'location = "{records(tmp_path / "n.json")}"\n',
        profile("notes"),
    )
    identity = home.diagnose().check(CheckName.identity)
    assert identity.status is CheckStatus.failed
    assert identity.problems[0].key == "sources[0].source_uid"


def test_an_unknown_profile_fails_access_and_skips_the_probes(home: Home, tmp_path) -> None:
    home.write_user(source("notes", "UIDNOTES0001", records(tmp_path / "n.json")), profile("notes"))
    diagnosis = home.diagnose("nosuch")
    access = diagnosis.check(CheckName.access)
    assert access.status is CheckStatus.failed
    assert "nosuch" in access.problems[0].message
    assert diagnosis.check(CheckName.health).status is CheckStatus.skipped

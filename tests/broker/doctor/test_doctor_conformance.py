"""recall doctor --conformance: replay a recorded suite; checking nothing is never a pass."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adapter_sdk.conformance import FAR_DEADLINE, CaseSpec, record_suite
from adapter_sdk.protocol import Method, request_frame
from broker.config import Config
from broker.doctor import CheckName, CheckStatus, diagnose_conformance

from .conftest import ADAPTER, ARGV, Home, profile, records


def initialize() -> dict:
    params = {
        "protocol_version_min": 1,
        "protocol_version_max": 1,
        "workdir": "${WORKDIR}",
        "source_id": "notes",
        "location": "${FIXTURE}/records.json",
    }
    return request_frame(1, Method.initialize, params)


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    fixture = tmp_path_factory.mktemp("fixture")
    records(fixture / "records.json", "alpha notes", "beta notes")
    search = {"query": "alpha", "filters": {}, "limit": 5, "deadline": FAR_DEADLINE}
    cases = [
        CaseSpec("handshake", "The manifest names the doctor adapter.", [initialize()], fixture=fixture),
        CaseSpec(
            "health",
            "Health is healthy with complete coverage.",
            [initialize(), request_frame(2, Method.health, {"deadline": FAR_DEADLINE})],
            fixture=fixture,
        ),
        CaseSpec(
            "search",
            "A query matching one title returns it.",
            [initialize(), request_frame(2, Method.search, search)],
            fixture=fixture,
        ),
    ]
    root = tmp_path_factory.mktemp("suite") / "probe"
    record_suite(root, ARGV, cases, verify=False)
    return root


def register(home: Home, suite: Path | None, *args: str) -> None:
    lines = [
        "[adapters.checked]",
        f"command = {json.dumps(sys.executable)}",
        f"args = {json.dumps([str(ADAPTER), *args])}",
        'freshness_modes = ["live"]',
    ]
    if suite is not None:
        lines.append(f"conformance = {json.dumps(str(suite))}")
    home.write_user("\n".join(lines) + "\n")


def loaded(home: Home) -> Config:
    config = home.load()
    assert isinstance(config, Config)
    return config


def test_a_recorded_suite_that_replays_as_recorded_exits_0(home: Home, suite: Path) -> None:
    register(home, suite)
    done = home.recall("doctor", "--conformance", "checked")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 of 3 recorded cases replayed as recorded" in done.stdout
    assert done.stdout.startswith("status ok\n")


def test_an_adapter_that_answers_differently_fails_conformance_and_exits_1(home: Home, suite: Path) -> None:
    register(home, suite, "--renamed")
    done = home.recall("doctor", "--conformance", "checked", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    conformance = next(c for c in report["checks"] if c["name"] == "conformance")
    assert conformance["status"] == "fail"
    assert [p["key"] for p in conformance["problems"]] == [
        f"adapters.checked.conformance.{case}" for case in ("handshake", "health", "search")
    ]
    assert "Renamed" in conformance["problems"][0]["message"]


def test_a_missing_suite_directory_fails_conformance(home: Home, tmp_path: Path) -> None:
    register(home, tmp_path / "no-suite")
    done = home.recall("doctor", "--conformance", "checked")
    assert done.returncode == 1
    assert "\nconformance    fail\n" in done.stdout
    assert str(tmp_path / "no-suite") in done.stdout


def test_a_registration_without_a_conformance_directory_fails(home: Home) -> None:
    register(home, None)
    check = diagnose_conformance(loaded(home), "checked").check(CheckName.conformance)
    assert check.status is CheckStatus.failed
    assert check.problems[0].key == "adapters.checked.conformance"


def test_an_unregistered_adapter_fails_conformance(home: Home) -> None:
    register(home, None)
    check = diagnose_conformance(loaded(home), "nosuch").check(CheckName.conformance)
    assert check.status is CheckStatus.failed
    assert "nosuch" in check.problems[0].message


def test_a_built_in_adapter_without_its_committed_suite_fails(home: Home, tmp_path: Path) -> None:
    register(home, None)
    diagnosis = diagnose_conformance(loaded(home), "notes", builtin_suites=tmp_path)
    check = diagnosis.check(CheckName.conformance)
    assert check.status is CheckStatus.failed
    assert str(tmp_path / "notes") in check.problems[0].message
    assert diagnosis.exit_code == 1


def test_a_configuration_that_does_not_load_skips_the_replay(home: Home, suite: Path) -> None:
    home.write_user("[adapters.checked\n")
    diagnosis = diagnose_conformance(home.load(), "checked")
    assert diagnosis.check(CheckName.configuration).status is CheckStatus.failed
    assert diagnosis.check(CheckName.conformance).status is CheckStatus.skipped


def live_servers_under(root: Path) -> list[int]:
    """Running (not zombie) polign-server processes whose arguments name a path under ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv[0].endswith(b"polign-server") and state != "Z" and str(root).encode() in b" ".join(argv):
            found.append(int(entry.name))
    return found


def test_the_eventstore_suite_leaves_no_store_server_running(home: Home, tmp_path: Path) -> None:
    pytest.importorskip("polign_recall", reason="the eventstore suite needs Polign Recall")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    home.environ["TMPDIR"] = str(scratch)  # where the replay copies each case's store
    home.write_user(profile())
    run = home.recall("doctor", "--conformance", "eventstore")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "13 of 13 recorded cases replayed as recorded" in run.stdout
    assert live_servers_under(scratch) == []
    assert list(scratch.iterdir()) == []

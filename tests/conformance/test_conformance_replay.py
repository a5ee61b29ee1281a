from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from adapter_sdk.conformance import ConformanceError, record_case, replay_case, replay_suite

from .conftest import is_running
from .sample_cases import FIXTURE, SAMPLES


def test_recorded_sample_suite_replays_as_recorded(recorded_suite: Path, sample_argv: list[str]) -> None:
    results = replay_suite(recorded_suite, sample_argv)

    assert [r.case for r in results] == sorted(p.name for p in recorded_suite.iterdir())
    assert [r.detail for r in results if not r.passed] == []


def test_suite_covers_the_required_cases(recorded_suite: Path) -> None:
    assert {p.name for p in recorded_suite.iterdir()} >= {
        "handshake", "version-rejection", "search-ranked", "search-empty", "search-skipped",
        "expand-details", "health", "cancel-inflight", "bad-settings",
    }


def test_wrong_field_fails_with_a_diff_naming_the_field(recorded_suite: Path, sample_argv: list[str]) -> None:
    result = replay_case(
        recorded_suite / "search-ranked", sample_argv, env={"SAMPLE_ADAPTER_FAULT": "wrong-title"}
    )

    assert not result.passed
    assert "response 2: /result/candidates/0/title" in result.detail
    assert 'want "Retention policy for audit logs", got "Retention policy for audit logs (edited)"' in result.detail


def test_volatile_timestamp_is_recorded_as_the_mask(recorded_suite: Path) -> None:
    frames = (recorded_suite / "health" / "response.jsonl").read_bytes().splitlines()

    assert orjson.loads(frames[1])["result"]["checked_at"] == "<volatile>"


def test_unmasked_timestamp_makes_the_recorder_refuse(tmp_path: Path, sample_argv: list[str]) -> None:
    with pytest.raises(ConformanceError, match="/result/checked_at"):
        record_case(
            tmp_path / "health", sample_argv, [SAMPLES.initialize(), SAMPLES.health(2)],
            description="health without its clock reading masked", fixture=FIXTURE,
        )


def test_run_paths_are_recorded_as_placeholders(recorded_suite: Path) -> None:
    text = (recorded_suite / "health" / "response.jsonl").read_text()

    assert '"records_file":"${FIXTURE}/records.json"' in text
    assert '"scratch":"${WORKDIR}"' in text
    assert "recall-conformance-" not in text


def test_placeholders_in_recorded_responses_bind_to_this_runs_paths(
    suite_copy: Path, sample_argv: list[str]
) -> None:
    responses = suite_copy / "health" / "response.jsonl"
    responses.write_text(responses.read_text().replace('"${WORKDIR}"', '"/srv/elsewhere"'))

    result = replay_case(suite_copy / "health", sample_argv)

    assert not result.passed
    assert "/result/diagnostics/scratch" in result.detail
    assert 'want "/srv/elsewhere"' in result.detail


def test_missing_response_is_reported_within_the_case_timeout(
    recorded_suite: Path, sample_argv: list[str]
) -> None:
    started = time.monotonic()
    result = replay_case(
        recorded_suite / "search-ranked", sample_argv, env={"SAMPLE_ADAPTER_FAULT": "silent"}, timeout=2.0
    )

    assert time.monotonic() - started < 8.0
    assert not result.passed
    assert "the manifest declares 2 responses, the replay produced 1 (no response within" in result.detail


def test_extra_response_is_a_failure(recorded_suite: Path, sample_argv: list[str]) -> None:
    result = replay_case(recorded_suite / "health", sample_argv, env={"SAMPLE_ADAPTER_FAULT": "chatty"})

    assert not result.passed
    assert "the manifest declares 2 responses, the replay produced 3" in result.detail


def test_adapter_crash_is_a_failure(recorded_suite: Path, sample_argv: list[str]) -> None:
    result = replay_case(recorded_suite / "search-ranked", sample_argv, env={"SAMPLE_ADAPTER_FAULT": "crash"})

    assert not result.passed
    assert "the adapter closed stdout with a request outstanding" in result.detail
    assert "response 2: no frame: the replay stopped here" in result.detail


def test_wedged_adapter_and_its_child_are_killed(
    recorded_suite: Path, sample_argv: list[str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    result = replay_case(
        recorded_suite / "search-ranked",
        sample_argv,
        env={"SAMPLE_ADAPTER_FAULT": "wedged", "SAMPLE_ADAPTER_PIDFILE": str(pidfile)},
        timeout=1.5,
    )

    pids = [int(line) for line in pidfile.read_text().split()]
    assert not result.passed
    assert len(pids) == 2
    deadline = time.monotonic() + 2.0
    while any(is_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if is_running(pid)] == []


def test_unstartable_command_is_a_failure(recorded_suite: Path, tmp_path: Path) -> None:
    result = replay_case(recorded_suite / "handshake", [str(tmp_path / "no-such-adapter")])

    assert not result.passed
    assert "cannot start adapter" in result.detail


def test_suite_without_cases_is_an_error(tmp_path: Path, sample_argv: list[str]) -> None:
    with pytest.raises(ConformanceError, match="holds no case directories"):
        replay_suite(tmp_path, sample_argv)


def test_response_count_disagreeing_with_the_recording_is_a_transcript_defect(
    suite_copy: Path, sample_argv: list[str]
) -> None:
    manifest_path = suite_copy / "handshake" / "manifest.json"
    manifest = orjson.loads(manifest_path.read_bytes())
    manifest_path.write_bytes(orjson.dumps({**manifest, "responses": 2}))

    result = replay_case(suite_copy / "handshake", sample_argv)

    assert not result.passed
    assert "transcript defect" in result.detail
    assert "declares 2 responses, response.jsonl holds 1" in result.detail


def test_manifest_naming_another_case_is_a_transcript_defect(
    suite_copy: Path, sample_argv: list[str]
) -> None:
    (suite_copy / "handshake").rename(suite_copy / "greeting")

    result = replay_case(suite_copy / "greeting", sample_argv)

    assert not result.passed
    assert "manifest names case 'handshake', directory is 'greeting'" in result.detail


def test_undeclared_placeholder_is_a_transcript_defect(suite_copy: Path, sample_argv: list[str]) -> None:
    requests = suite_copy / "handshake" / "request.jsonl"
    requests.write_text(requests.read_text().replace('"source_id":"samples"', '"source_id":"${SOURCE}"'))

    result = replay_case(suite_copy / "handshake", sample_argv)

    assert not result.passed
    assert "uses ${SOURCE}, which the manifest does not declare" in result.detail


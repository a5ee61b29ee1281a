from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson

from adapter_sdk.conformance import load_case, main

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:


    return subprocess.run(
        [sys.executable, "-m", "adapter_sdk.conformance", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_replay_of_a_green_suite_exits_zero(
    recorded_suite: Path, sample_argv: list[str], tmp_path: Path
) -> None:
    for case in ("handshake", "search-empty"):
        shutil.copytree(recorded_suite / case, tmp_path / case)

    done = run_cli("replay", str(tmp_path), "--", *sample_argv)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok    handshake" in done.stdout
    assert "2 of 2 recorded cases replayed as recorded" in done.stdout


def test_replay_failure_exits_one_and_names_the_field(recorded_suite: Path, sample_argv: list[str]) -> None:
    done = run_cli(
        "replay", str(recorded_suite / "search-ranked"), "--", *sample_argv,
        env={"SAMPLE_ADAPTER_FAULT": "wrong-title"},
    )

    assert done.returncode == 1
    assert "FAIL  search-ranked" in done.stdout
    assert "/result/candidates/0/title" in done.stdout


def test_record_creates_a_case_from_a_requests_file(tmp_path: Path, sample_argv: list[str]) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "recall/initialize", "params": {
            "protocol_version_min": 1, "protocol_version_max": 1, "workdir": "${WORKDIR}",
            "source_id": "samples", "location": "${FIXTURE}"}}) + b"\n"
    )
    case = tmp_path / "suite" / "handshake"

    done = run_cli(
        "record", str(case), "--requests", str(requests), "--description", "The handshake.",
        "--fixture", str(REPO / "tests" / "conformance" / "sample_fixture"), "--", *sample_argv,
    )

    assert done.returncode == 0, done.stderr
    assert load_case(case).manifest.responses == 1
    assert (case / "fixture" / "records.json").is_file()


def test_record_rerecords_an_existing_case(suite_copy: Path, sample_argv: list[str]) -> None:
    case = suite_copy / "search-empty"
    (case / "response.jsonl").write_text('{"jsonrpc":"2.0","id":1,"result":{}}\n')
    manifest = orjson.loads((case / "manifest.json").read_bytes())
    (case / "manifest.json").write_bytes(orjson.dumps({**manifest, "responses": 1}))

    done = run_cli("record", str(case), "--", *sample_argv)

    assert done.returncode == 0, done.stderr
    assert load_case(case).manifest.responses == 2
    assert load_case(case).manifest.description == manifest["description"]


def test_missing_adapter_command_is_a_usage_error(recorded_suite: Path) -> None:
    assert main(["replay", str(recorded_suite)]) == 2


def test_empty_suite_exits_one(tmp_path: Path, sample_argv: list[str]) -> None:
    assert main(["replay", str(tmp_path), "--", *sample_argv]) == 1

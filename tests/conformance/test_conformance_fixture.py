"""``${FIXTURE}`` is the committed fixture in place, and no replay or recording may change it.

A transcript recorded by the format's other implementation, whose adapter
checks it was handed the committed folder, replays here as recorded. A case
whose adapter must write into its location declares ``writable_fixture`` and
is given a copy; one that writes without declaring it fails, naming what it
wrote.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adapter_sdk.conformance import ConformanceError, load_case, record_case, replay_case
from adapter_sdk.conformance.fixture import FixtureState

PROBE = [sys.executable, str(Path(__file__).with_name("fixture_probe.py"))]
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "recall/initialize",
    "params": {"protocol_version_min": 1, "protocol_version_max": 1, "workdir": "${WORKDIR}",
               "source_id": "probe", "location": "${FIXTURE}", "settings": {}},
}
WROTE = "probe.log"


def write_case(suite: Path, name: str, *, in_place: bool, writable_fixture: bool | None = None) -> Path:
    """A case laid out as the reference records it: the recording says where the fixture was."""
    case = suite / name
    (case / "fixture").mkdir(parents=True)
    (case / "fixture" / "records.json").write_text('[{"id": "r-1"}]\n')
    manifest = {
        "case": name,
        "description": "The adapter reports whether its location is the committed fixture.",
        "flow": "lockstep",
        "placeholders": {"FIXTURE": "absolute path of this case's fixture/ directory",
                         "WORKDIR": "absolute path of a fresh, writable, empty directory"},
        "volatile": [],
        "responses": 1,
    }
    if writable_fixture is not None:
        manifest["writable_fixture"] = writable_fixture
    (case / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (case / "request.jsonl").write_text(json.dumps(INITIALIZE) + "\n")
    recorded = {"id": 1, "jsonrpc": "2.0", "result": {"fixture_in_place": in_place}}
    (case / "response.jsonl").write_text(json.dumps(recorded) + "\n")
    return case


def test_fixture_is_the_committed_folder_in_place(tmp_path: Path) -> None:
    case = write_case(tmp_path, "fixture-in-place", in_place=True)

    result = replay_case(case, PROBE)

    assert result.passed, result.detail


def test_an_adapter_writing_into_a_fixture_in_place_fails_the_case_naming_what_it_wrote(tmp_path: Path) -> None:
    case = write_case(tmp_path, "writes-in-place", in_place=True)

    result = replay_case(case, PROBE, env={"FIXTURE_PROBE_WRITE": WROTE})

    assert not result.passed
    assert f"the adapter changed the committed fixture ({WROTE})" in result.detail
    assert '"writable_fixture": true' in result.detail


def test_a_writable_fixture_case_writes_into_a_copy_and_leaves_the_committed_bytes(tmp_path: Path) -> None:
    case = write_case(tmp_path, "writes-a-copy", in_place=False, writable_fixture=True)
    committed = FixtureState.read(case)

    result = replay_case(case, PROBE, env={"FIXTURE_PROBE_WRITE": WROTE})

    assert result.passed, result.detail
    assert committed.changes() == []
    assert not (case / "fixture" / WROTE).exists()


def test_writable_fixture_must_be_a_boolean(tmp_path: Path) -> None:
    case = write_case(tmp_path, "bad-flag", in_place=True, writable_fixture="yes")  # type: ignore[arg-type]

    result = replay_case(case, PROBE)

    assert not result.passed
    assert "writable_fixture must be true or false" in result.detail


def test_recording_refuses_an_adapter_that_writes_into_its_fixture(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "records.json").write_text("[]\n")

    with pytest.raises(ConformanceError, match=WROTE):
        record_case(tmp_path / "suite" / "writes", PROBE, [INITIALIZE], description="writes in place",
                    fixture=source, env={"FIXTURE_PROBE_WRITE": WROTE})

    case = tmp_path / "suite" / "copied"
    record_case(case, PROBE, [INITIALIZE], description="writes into its copy", fixture=source,
                writable_fixture=True, env={"FIXTURE_PROBE_WRITE": WROTE})
    assert load_case(case).manifest.writable_fixture is True
    assert not (case / "fixture" / WROTE).exists()

"""The broker's candidate: the adapter's record as admitted, the source identity stamped beside it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapter_sdk.protocol import Candidate as WireCandidate
from adapter_sdk.protocol import WireValidationError
from broker.candidate_admission import stamp
from broker.contracts import Candidate, Sensitivity


def _received(**fields: object) -> WireCandidate:
    values: dict[str, object] = {
        "candidate_id": "restore.md#c1",
        "source_record_id": "restore.md",
        "locator": "anything:restore.md#L3-L9",
        "record_type": "document",
        "title": "Restore\x1b[31m runbook",
        "excerpt": "pgbackrest restore",
        "excerpt_kind": "matched",
        "local_rank": 1,
        "event_time": "2025-05-01T09:30:00Z",
        "sensitivity": "public",
        "metadata": {"path": "restore.md"},
    }
    return WireCandidate.model_validate(values | fields)


def _admitted(wire: WireCandidate) -> Candidate:
    candidate = stamp(wire, source_uid="01NOTES", source_id="notes", floor=Sensitivity.internal)
    assert isinstance(candidate, Candidate)
    return candidate


def test_admission_stamps_a_copy_and_leaves_the_received_record_as_it_came() -> None:
    received = _received()
    candidate = _admitted(received)
    assert (candidate.locator, candidate.sensitivity) == ("notes:restore.md#L3-L9", Sensitivity.internal)
    assert "\x1b" not in candidate.title
    assert (received.locator, received.sensitivity) == ("anything:restore.md#L3-L9", Sensitivity.public)
    assert candidate.wire.source_uid is None and candidate.source_uid == "01NOTES"


def test_a_candidate_dumps_flat_in_the_wire_order_with_its_identity_in_place() -> None:
    candidate = _admitted(_received())
    candidate.project_file = "/repo/recall.toml"
    wire_order = [name for name in WireCandidate._fields if name in candidate.to_json()]
    assert list(candidate.to_json()) == [*wire_order, "project_file"]
    assert candidate.to_json()["source_uid"] == "01NOTES"
    assert candidate.to_json()["event_time"] == "2025-05-01T09:30:00Z"


def test_the_flat_form_validates_back_to_the_same_candidate() -> None:
    candidate = _admitted(_received(source_uid="", source_id=""))  # the wire allows them empty
    assert Candidate.model_validate(candidate.to_json()) == candidate
    assert candidate.event_time == datetime(2025, 5, 1, 9, 30, tzinfo=UTC)


def test_a_problem_in_the_flat_form_is_located_at_its_own_key() -> None:
    flat = _admitted(_received()).to_json() | {"local_rank": 0}
    with pytest.raises(WireValidationError) as refused:
        Candidate.model_validate(flat)
    assert [problem["loc"] for problem in refused.value.errors()] == [("local_rank",)]


def test_a_copy_has_its_own_record_and_takes_updates_of_either_part() -> None:
    candidate = _admitted(_received())
    shaped = candidate.model_copy(update={"excerpt": None, "source_id": "mirror"})
    assert (shaped.excerpt, shaped.source_id) == (None, "mirror")
    assert (candidate.excerpt, candidate.source_id) == ("pgbackrest restore", "notes")
    shaped.title = "Renamed"
    assert candidate.title != "Renamed"


def test_a_field_written_on_the_candidate_is_written_on_its_record() -> None:
    candidate = _admitted(_received())
    candidate.metadata = {"promoted_successor": True}
    assert candidate.wire.metadata == {"promoted_successor": True}
    assert candidate.to_json()["metadata"] == {"promoted_successor": True}

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from broker.contracts import VERDICT_DEFINITIONS, Clock, Verdict
from broker.temporal import (
    TemporalRecord,
    clock_of,
    known_verdict,
    resolve_supersessions,
    stalest,
    verdict_for,
)

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def rec(locator: str, *, dated=None, recorded=None, supersedes=(), superseded_by=()) -> TemporalRecord:
    source_id, local = locator.split(":", 1)
    return TemporalRecord(
        key=locator, source_id=source_id, names=frozenset({local}), locator=locator,
        dated=dated, recorded=recorded, supersedes=tuple(supersedes),
        superseded_by=tuple(superseded_by),
    )


def test_record_expires_at_its_valid_to_instant() -> None:
    assert verdict_for(None, NOW, NOW) is Verdict.expired
    assert verdict_for(None, NOW + timedelta(seconds=1), NOW) is Verdict.current


def test_record_is_not_yet_valid_before_its_valid_from() -> None:
    assert verdict_for(NOW + DAY, None, NOW) is Verdict.not_yet_valid
    assert verdict_for(NOW, None, NOW) is Verdict.current


def test_timestamp_without_zone_is_read_as_utc() -> None:
    assert verdict_for(None, datetime(2025, 6, 1, 11, 0), NOW) is Verdict.expired


def test_superseded_outranks_expired_outranks_not_yet_valid() -> None:
    assert stalest([Verdict.not_yet_valid, Verdict.superseded, Verdict.expired]) is Verdict.superseded
    assert stalest([Verdict.current, Verdict.not_yet_valid]) is Verdict.not_yet_valid


def test_not_yet_known_outranks_every_other_claim() -> None:
    assert stalest([Verdict.superseded, Verdict.not_yet_known, Verdict.expired]) is Verdict.not_yet_known


def test_an_ambiguous_supersession_yields_to_the_records_own_validity() -> None:
    assert stalest([Verdict.ambiguous_supersession, Verdict.expired]) is Verdict.expired
    assert stalest([Verdict.current, Verdict.ambiguous_supersession]) is Verdict.ambiguous_supersession


def test_a_record_written_after_as_of_is_not_yet_known() -> None:
    assert known_verdict(NOW + DAY, NOW) is Verdict.not_yet_known
    assert known_verdict(NOW, NOW) is Verdict.current


def test_without_as_of_or_a_recorded_time_the_transaction_clock_says_nothing() -> None:
    assert known_verdict(NOW + DAY, None) is Verdict.current
    assert known_verdict(None, NOW) is Verdict.current


def test_each_verdict_names_its_clock() -> None:
    assert clock_of(Verdict.not_yet_known) is Clock.transaction_time
    assert {clock_of(v) for v in Verdict if v is not Verdict.not_yet_known} == {Clock.valid_time}


def test_every_verdict_is_defined_against_the_one_it_is_confused_with() -> None:
    neighbours = {
        Verdict.current: Verdict.ambiguous_supersession,
        Verdict.superseded: Verdict.expired,
        Verdict.expired: Verdict.superseded,
        Verdict.not_yet_valid: Verdict.not_yet_known,
        Verdict.not_yet_known: Verdict.not_yet_valid,
        Verdict.ambiguous_supersession: Verdict.superseded,
    }
    assert set(VERDICT_DEFINITIONS) == set(Verdict)
    for verdict, neighbour in neighbours.items():
        assert f"as opposed to {neighbour}" in VERDICT_DEFINITIONS[verdict]


def test_a_supersession_recorded_after_as_of_does_not_apply() -> None:
    records = [rec("notes:old.md"),
               rec("notes:new.md", supersedes=["notes:old.md"], recorded=NOW - DAY)]
    now = resolve_supersessions(records, NOW)
    then = resolve_supersessions(records, NOW, known_at=NOW - 2 * DAY)
    assert "notes:old.md" in now.superseded
    assert then.superseded == {}
    assert "(transaction time)" in then.notes["notes:old.md"][0]


def test_valid_time_and_transaction_time_compose() -> None:
    """Believed at as_of, about valid_at: the successor was written but not yet in force."""
    records = [rec("notes:old.md"),
               rec("notes:new.md", supersedes=["notes:old.md"], dated=NOW, recorded=NOW - 5 * DAY)]
    found = resolve_supersessions(records, NOW - DAY, known_at=NOW - 2 * DAY)
    assert found.superseded == {}
    assert "(valid time)" in found.notes["notes:old.md"][0]


def test_supersedes_claim_replaces_the_named_record() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md"), rec("notes:new.md", supersedes=["notes:old.md"])], NOW)
    assert found.superseded["notes:old.md"].successor == "notes:new.md"
    assert "notes:new.md" not in found.superseded


def test_superseded_by_a_retrieved_record_names_it() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md", superseded_by=["notes:new.md"]), rec("notes:new.md")], NOW)
    assert found.superseded["notes:old.md"].successor_key == "notes:new.md"
    assert found.missing == []


def test_superseded_by_an_unretrieved_record_is_a_missing_successor() -> None:
    found = resolve_supersessions([rec("notes:old.md", superseded_by=["notes:new.md"])], NOW)
    assert found.superseded["notes:old.md"].successor == "notes:new.md"
    assert found.missing == ["notes:new.md"]


def test_supersession_dated_after_the_instant_does_not_apply() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md"), rec("notes:new.md", dated=NOW + DAY, supersedes=["notes:old.md"])],
        NOW)
    assert found.superseded == {}
    assert "after the evaluation instant" in found.notes["notes:old.md"][0]


def test_undated_supersession_applies() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md", superseded_by=["notes:new.md"]), rec("notes:new.md")], NOW)
    assert "notes:old.md" in found.superseded


def test_chain_resolves_to_the_terminal_successor() -> None:
    found = resolve_supersessions(
        [rec("notes:v1.md"), rec("notes:v2.md", supersedes=["notes:v1.md"]),
         rec("notes:v3.md", supersedes=["notes:v2.md"])], NOW)
    assert found.superseded["notes:v1.md"].successor == "notes:v3.md"
    assert found.superseded["notes:v2.md"].successor == "notes:v3.md"


def test_chain_edges_are_dated_one_step_at_a_time() -> None:
    found = resolve_supersessions(
        [rec("notes:v1.md"), rec("notes:v2.md", dated=NOW - DAY, supersedes=["notes:v1.md"]),
         rec("notes:v3.md", dated=NOW + DAY, supersedes=["notes:v2.md"])], NOW)
    assert found.superseded["notes:v1.md"].successor == "notes:v2.md"
    assert "notes:v2.md" not in found.superseded


def test_cycle_is_reported_and_its_records_left_current() -> None:
    found = resolve_supersessions(
        [rec("notes:a.md", supersedes=["notes:b.md"]), rec("notes:b.md", supersedes=["notes:a.md"])],
        NOW)
    assert found.superseded == {}
    assert found.contested == {"notes:a.md", "notes:b.md"}
    assert found.problems == ["supersession cycle between notes:a.md, notes:b.md: all left current"]


def test_two_different_successors_make_an_ambiguous_supersession_naming_both() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md"), rec("notes:a.md", supersedes=["notes:old.md"]),
         rec("notes:b.md", supersedes=["notes:old.md"])], NOW)
    assert "notes:old.md" not in found.superseded
    assert found.ambiguous == {"notes:old.md": ("notes:a.md", "notes:b.md")}
    assert found.problems == [
        "ambiguous successor for notes:old.md: notes:a.md and notes:b.md both replace it; "
        "marked ambiguous_supersession, neither chosen"]


def test_two_paths_to_one_terminal_successor_are_not_ambiguous() -> None:
    found = resolve_supersessions(
        [rec("notes:v1.md"), rec("notes:v2.md", supersedes=["notes:v1.md"]),
         rec("notes:v3.md", supersedes=["notes:v2.md", "notes:v1.md"])], NOW)
    assert found.superseded["notes:v1.md"].successor == "notes:v3.md"
    assert found.problems == []


def test_self_claim_is_ignored() -> None:
    found = resolve_supersessions([rec("notes:a.md", supersedes=["notes:a.md"])], NOW)
    assert found.superseded == {} and found.problems == []


def test_reference_without_a_known_source_is_read_in_the_writers_source() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md"), rec("notes:new.md", supersedes=["old.md"])], NOW)
    assert found.superseded["notes:old.md"].successor == "notes:new.md"


def test_supersession_across_sources() -> None:
    found = resolve_supersessions(
        [rec("tasks:t1"), rec("notes:decision.md", supersedes=["tasks:t1"])], NOW)
    assert found.superseded["tasks:t1"].successor == "notes:decision.md"


def test_reference_to_a_configured_source_that_returned_nothing_names_that_source() -> None:
    found = resolve_supersessions(
        [rec("notes:old.md", superseded_by=["mail:thread-9"])], NOW, frozenset({"notes", "mail"}))
    assert found.missing == ["mail:thread-9"]

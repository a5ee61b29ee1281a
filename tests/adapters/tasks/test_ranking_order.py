"""The order of tasks that score alike, and the hits a limit cuts from a tie."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.tasks.query import parse_query
from adapters.tasks.ranking import RecordIndex, Scope, rank
from adapters.tasks.task_record import TaskRecord


def record(record_id: str, description: str, status: str = "pending", due: datetime | None = None) -> TaskRecord:
    return TaskRecord(record_id=record_id, description=description, status=status, due=due)


DUE_SOON = datetime(2030, 1, 1, tzinfo=UTC)
DUE_LATER = datetime(2031, 1, 1, tzinfo=UTC)
RECORDS = [
    record("e0000000000e", "rotate the backup keys", status="completed"),
    record("d0000000000d", "rotate the backup keys"),
    record("c0000000000c", "rotate the backup keys", due=DUE_LATER),
    record("b0000000000b", "rotate the backup keys", due=DUE_SOON),
    record("a0000000000a", "rotate the backup keys"),
    record("f0000000000f", "water the plants"),
    record("90000000000f", "spare keys for the backup"),  # one of the two words: scores lower
]
# equal scores: open before closed, then the soonest due, then the record id
TIED_ORDER = ["b0000000000b", "c0000000000c", "a0000000000a", "d0000000000d", "e0000000000e"]


def ids(query: str, limit: int) -> tuple[list[str], int]:
    ranking = rank(RECORDS, parse_query(query), Scope(), limit, RecordIndex(RECORDS))
    return [hit.record.record_id for hit in ranking.hits], ranking.matched_count


def test_tasks_that_score_alike_are_ordered_open_due_soonest_then_by_id() -> None:
    shown, matched = ids("rotate keys", 10)
    assert shown[:5] == TIED_ORDER and matched == 6


def test_a_limit_cutting_through_a_tie_keeps_the_first_of_that_order() -> None:
    for limit in range(1, 6):
        shown, matched = ids("rotate keys", limit)
        assert shown == TIED_ORDER[:limit]
        assert matched == 6  # what was matched is counted whatever is shown


def test_a_question_of_field_constraints_alone_lists_every_task_satisfying_them() -> None:
    shown, matched = ids("status:pending", 3)
    assert matched == 6
    assert shown == ["b0000000000b", "c0000000000c", "90000000000f"]


def test_a_short_id_of_digits_alone_finds_its_task_and_a_small_number_stays_a_working_id() -> None:
    digits_only = record("13248406b1c2", "water the plants")  # its short id reads as a number
    records = [*RECORDS, digits_only]
    for query in ("13248406", "13248406b1c2"):
        ranking = rank(records, parse_query(query), Scope(), 5, RecordIndex(records))
        assert [hit.record.record_id for hit in ranking.hits] == ["13248406b1c2"], query
    assert parse_query("3").record_ids == ()
    assert parse_query("#13248406").record_ids == ()  # "#" names a working-set id only

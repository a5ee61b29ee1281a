from __future__ import annotations

from pathlib import Path

import pytest

from adapters.tasks.todotxt import read_list

from .adapter_process import AdapterError
from .conftest import OpenAdapter

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "sample" / "todo.txt"

TODO = """\
(A) 2026-11-02 Run the quarterly restore drill for the wiki database +backup @infra due:2026-12-05
2026-11-20 Prepare the on-call handover notes for Priya +oncall @team
(B) 2026-13-45 Walk through the release checklist for v2.4 +release

Replace the failing disk in the home-lab ZFS mirror +homelab due:someday
"""
DONE = """\
x 2026-11-08 2026-11-01 Take a full pg_dump of db-main before the PostgreSQL 16 upgrade +pg16 pri:A
"""


def parse(todo: str, done: str | None = None) -> dict[str, object]:
    contents = {"todo.txt": todo.encode()}
    if done is not None:
        contents["done.txt"] = done.encode()
    parsed = read_list(Path("todo.txt"), contents)
    return {r.description.split()[0]: r for r in parsed.records} | {"_unparsed": parsed.unparsed_lines}


@pytest.fixture
def todo_file(tmp_path: Path) -> Path:
    folder = tmp_path / "list"
    folder.mkdir()
    (folder / "todo.txt").write_text(TODO)
    (folder / "done.txt").write_text(DONE)
    return folder / "todo.txt"


def test_line_fields_are_parsed() -> None:
    drill = parse(TODO)["Run"]
    assert drill.priority == "A"
    assert drill.entry.date().isoformat() == "2026-11-02"
    assert drill.projects == ("backup",) and drill.contexts == ("infra",)
    assert drill.due.date().isoformat() == "2026-12-05"
    assert drill.attributes == {"due": "2026-12-05"}
    assert drill.working_id == 1 and drill.status == "pending"


def test_done_line_has_completion_date_and_priority_from_pri_key() -> None:
    dump = parse(TODO, DONE)["Take"]
    assert dump.status == "completed"
    assert dump.end.date().isoformat() == "2026-11-08"
    assert dump.entry.date().isoformat() == "2026-11-01"
    assert dump.priority == "A"
    assert dump.working_id is None


def test_malformed_dates_keep_the_line_as_plain_text_and_count_it() -> None:
    parsed = parse(TODO)
    assert parsed["_unparsed"] == ["todo.txt:3", "todo.txt:5"]
    release = parsed["(B)"]
    assert release.unparsed and release.priority is None
    assert release.description.startswith("(B) 2026-13-45 Walk through the release checklist")


def test_stable_id_survives_edits_elsewhere_and_priority_change() -> None:
    before = parse(TODO)["Prepare"].record_id
    edited = "2026-11-28 A brand new first line +inbox\n" + TODO.replace("(A) 2026-11-02", "(C) 2026-11-02")
    after = parse(edited)
    assert after["Prepare"].record_id == before
    assert after["Run"].record_id == parse(TODO)["Run"].record_id


def test_stable_id_survives_completion_into_done_txt() -> None:
    pending = parse("(A) 2026-11-01 Take a full pg_dump of db-main before the PostgreSQL 16 upgrade +pg16\n")
    assert pending["Take"].record_id == parse("", DONE)["Take"].record_id


def test_stable_id_changes_when_the_task_itself_is_edited() -> None:
    edited = TODO.replace("handover notes for Priya", "handover notes for Sam")
    assert parse(edited)["Prepare"].record_id != parse(TODO)["Prepare"].record_id


def test_identical_lines_get_distinct_ids() -> None:
    twice = "2026-11-01 Water the plants\n2026-11-01 Water the plants\n"
    records = read_list(Path("todo.txt"), {"todo.txt": twice.encode()}).records
    assert len({r.record_id for r in records}) == 2


def test_sample_list_parses_cleanly() -> None:
    contents = {p.name: p.read_bytes() for p in SAMPLE.parent.glob("*.txt")}
    parsed = read_list(SAMPLE, contents)
    assert parsed.unparsed_lines == []
    assert len(parsed.records) == 25
    statuses = {r.status for r in parsed.records}
    assert statuses == {"pending", "completed"}


def test_mode_follows_location_file_versus_folder(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    assert open_adapter(todo_file).manifest["display_name"] == "Tasks (todo.txt)"
    assert "executable_requirements" not in open_adapter(todo_file).manifest
    assert open_adapter(todo_file.parent).manifest["display_name"] == "Tasks (Taskwarrior)"


def test_explicit_mode_setting_wins_over_the_location(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    inbox = tmp_path / "inbox"
    adapter = open_adapter(inbox, {"mode": "todotxt"})
    assert adapter.manifest["display_name"] == "Tasks (todo.txt)"
    health = adapter.health()
    assert health["status"] == "unavailable"
    assert "todo.txt file" in health["diagnostics"]["reason"]


def test_todo_search_finds_task_and_reports_unparsed_count(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    result = open_adapter(todo_file).search("restore drill")
    assert result["outcome"] == "success"
    top = result["candidates"][0]
    assert top["title"].startswith("Run the quarterly restore drill")
    assert top["metadata"]["contexts"] == ["infra"]
    assert top["metadata"]["line"] == 1
    assert result["diagnostics"]["unparsed_lines"] == 2


def test_unparsed_line_is_still_found_as_plain_text(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    top = open_adapter(todo_file).search("release checklist")["candidates"][0]
    assert top["metadata"]["unparsed"] is True
    assert top["metadata"]["line"] == 3


def test_todo_search_matches_words_by_their_stem(open_adapter: OpenAdapter, todo_file: Path) -> None:
    adapter = open_adapter(todo_file)
    plural, singular = adapter.search("restore drills"), adapter.search("restore drill")
    assert [c["title"] for c in plural["candidates"]] == [c["title"] for c in singular["candidates"]]
    assert plural["candidates"][0]["title"].startswith("Run the quarterly restore drill")
    assert plural["candidates"][0]["relevance"] == singular["candidates"][0]["relevance"]


def test_task_number_is_the_todo_line_number(open_adapter: OpenAdapter, todo_file: Path) -> None:
    result = open_adapter(todo_file).search("task 2")
    assert [c["title"] for c in result["candidates"]] == [
        "Prepare the on-call handover notes for Priya +oncall @team"
    ]
    assert result["candidates"][0]["match_signals"] == ["exact_identifier", "alias"]


def test_stable_id_prefix_is_an_exact_identifier(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    adapter = open_adapter(todo_file)
    record_id = adapter.search("handover")["candidates"][0]["source_record_id"]
    result = adapter.search(record_id[:8])
    assert [c["source_record_id"] for c in result["candidates"]] == [record_id]


def test_done_task_has_valid_to_and_is_pending_before_completion(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    adapter = open_adapter(todo_file)
    now = adapter.search("pg_dump")["candidates"][0]
    then = adapter.search("pg_dump", as_of="2026-11-05T00:00:00Z")["candidates"][0]
    assert now["valid_to"].startswith("2026-11-08") and now["metadata"]["status"] == "completed"
    assert then["metadata"]["status"] == "pending" and "valid_to" not in then


def test_undated_match_excluded_by_a_date_filter_makes_the_search_partial(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    result = open_adapter(todo_file).search("failing disk", filters={"since": "2026-01-01T00:00:00Z"})
    assert result["outcome"] == "partial"
    assert result["candidates"] == []
    assert result["diagnostics"]["undated_matches_excluded"] == 1


def test_expand_a_todo_task_and_expire_it_after_its_line_is_edited(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    adapter = open_adapter(todo_file)
    locator = adapter.search("handover")["candidates"][0]["locator"]
    expanded = adapter.expand(locator, "full")
    assert expanded["provenance"] == "todo.txt line 2"
    assert "contexts: team" in expanded["content"]
    todo_file.write_text(TODO.replace("for Priya", "for Sam"))
    with pytest.raises(AdapterError) as error:
        adapter.expand(locator)
    assert error.value.code == -32003


def test_todo_locator_that_is_not_a_stable_id_is_unknown(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    with pytest.raises(AdapterError) as error:
        open_adapter(todo_file).expand("tasks:line-2")
    assert error.value.code == -32002


def test_undecodable_bytes_are_kept_and_counted(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    todo = tmp_path / "todo.txt"
    todo.write_bytes(b"2026-11-01 Check the backup \xff\xfe host logs +backup\n")
    result = open_adapter(todo).search("backup host logs")
    assert result["diagnostics"]["unparsed_lines"] == 1
    assert result["candidates"][0]["metadata"]["unparsed"] is True


def test_health_counts_unparsed_lines_with_a_sample(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    health = open_adapter(todo_file).health()
    assert (health["status"], health["record_count"]) == ("healthy", 5)
    assert health["diagnostics"]["unparsed_lines"] == 2
    assert health["diagnostics"]["unparsed_lines_sample"] == ["todo.txt:3", "todo.txt:5"]
    assert health["diagnostics"]["store_identity"].startswith("file:")


def test_a_done_line_without_a_date_is_ended_as_of_the_file_mtime(
    open_adapter: OpenAdapter, todo_file: Path
) -> None:
    import os

    todo_file.write_text(TODO + "x done zebra task\n")
    os.utime(todo_file, (1_780_000_000, 1_780_000_000))
    zebra = open_adapter(todo_file).search("zebra")["candidates"][0]
    assert zebra["metadata"]["status"] == "completed"
    assert zebra["metadata"]["end_date_missing"] is True
    assert zebra["valid_to"].startswith("2026-05-28T20:26:40")


def test_a_bare_number_is_a_working_set_id(open_adapter: OpenAdapter, todo_file: Path) -> None:
    result = open_adapter(todo_file).search("#2")
    assert [c["title"] for c in result["candidates"]] == [
        "Prepare the on-call handover notes for Priya +oncall @team"
    ]
    assert result["candidates"][0]["match_signals"] == ["exact_identifier", "alias"]

from __future__ import annotations

import pytest

from .adapter_process import AdapterError, AdapterProcess
from .conftest import OpenAdapter, TaskFolder, requires_task

pytestmark = requires_task


def locators(result: dict) -> list[str]:
    return [c["locator"] for c in result["candidates"]]


def test_manifest_declares_tasks_contract_and_task_program(tw_adapter: AdapterProcess) -> None:
    manifest = tw_adapter.manifest
    assert manifest["adapter_id"] == "recall-tasks/1"
    assert manifest["record_types"] == ["task"]
    assert manifest["query_modes"] == ["exact", "lexical", "structured"]
    assert manifest["as_of_support"] == "filter"
    assert manifest["capabilities"] == ["search", "expand"]
    assert manifest["executable_requirements"][0]["command"] == "task"


def test_lexical_search_finds_task_by_description(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    adapter = tw_adapter
    result = adapter.search("restore drill")
    assert result["outcome"] == "success"
    top = result["candidates"][0]
    assert top["locator"] == f"tasks:{shared_task_folder.uuids['drill']}"
    assert top["title"] == "Run the quarterly restore drill for the wiki database"
    assert top["record_type"] == "task"
    assert top["match_signals"] == ["lexical"]
    assert 0 < top["relevance"] <= 1
    assert top["metadata"]["project"] == "infra.backup"
    assert top["metadata"]["tags"] == ["backup"]
    assert top["metadata"]["priority"] == "H"
    assert top["metadata"]["due"].startswith("2030-01-15")
    assert top["event_time"].startswith("2025-01-10")
    assert "valid_to" not in top


def test_annotation_text_is_searched_and_shown_as_matched_excerpt(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search("restic snapshot")
    top = result["candidates"][0]
    assert top["source_record_id"] == shared_task_folder.uuids["drill"]
    assert top["excerpt_kind"] == "matched"
    assert "restored in 42 minutes from the restic snapshot" in top["excerpt"]
    assert top["metadata"]["annotations"][0]["description"].startswith("restored in 42")


def test_completed_task_carries_end_as_valid_to(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search("pg_upgrade PostgreSQL")
    top = result["candidates"][0]
    assert top["source_record_id"] == shared_task_folder.uuids["pg16"]
    assert top["metadata"]["status"] == "completed"
    assert top["valid_to"].startswith("2025-03-01")


def test_natural_language_scaffolding_does_not_match(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search("what did we do about the kubernetes")
    assert result["outcome"] == "success"
    assert result["candidates"] == []
    assert "what" in result["diagnostics"]["query_terms_removed"]


def test_full_uuid_is_an_exact_identifier_ranked_first(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["handover"]
    result = tw_adapter.search(f"restore drill {uuid}")
    top = result["candidates"][0]
    assert top["source_record_id"] == uuid
    assert top["match_signals"][0] == "exact_identifier"
    assert top["relevance"] == 1.0
    assert result["candidates"][1]["source_record_id"] == shared_task_folder.uuids["drill"]


def test_short_uuid_is_an_exact_identifier(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["disk"]
    result = tw_adapter.search(f"what about {uuid[:8]}?")
    assert locators(result) == [f"tasks:{uuid}"]
    assert result["candidates"][0]["match_signals"] == ["exact_identifier"]


def test_task_working_id_is_an_exact_identifier(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    # after garbage collection the working set is drill=1, handover=2, disk=3
    result = tw_adapter.search("task 2")
    assert locators(result) == [f"tasks:{shared_task_folder.uuids['handover']}"]
    assert result["candidates"][0]["metadata"]["id"] == 2


def test_project_filter_includes_subprojects(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search(
        "restore drill postgresql handover", filters={"project": "infra"}
    )
    found = {c["source_record_id"] for c in result["candidates"]}
    assert found == {shared_task_folder.uuids["drill"], shared_task_folder.uuids["pg16"]}


def test_since_and_until_filter_on_entry_time(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search(
        "project:infra", filters={"since": "2025-01-20T00:00:00Z", "until": "2025-03-01T00:00:00Z"}
    )
    assert locators(result) == [f"tasks:{shared_task_folder.uuids['pg16']}"]


def test_structured_query_lists_tasks_with_a_tag(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search("+oncall")
    assert locators(result) == [f"tasks:{shared_task_folder.uuids['handover']}"]
    assert result["candidates"][0]["match_signals"] == ["field"]


def test_record_type_filter_without_task_is_skipped_as_mismatch(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search(
        "restore drill", filters={"record_types": ["message"]}
    )
    assert (result["outcome"], result["reason"]) == ("skipped", "record_type_mismatch")
    assert result["candidates"] == []


def test_entities_filter_is_skipped_as_unsupported_not_ignored(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search(
        "restore drill", filters={"entities": ["Priya"]}
    )
    assert (result["outcome"], result["reason"]) == ("skipped", "filter_unsupported")
    assert result["diagnostics"]["unsupported_filters"] == ["entities"]
    assert result["candidates"] == []


def test_as_of_excludes_tasks_entered_later(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search(
        "disk drill", as_of="2025-03-15T00:00:00Z"
    )
    assert locators(result) == [f"tasks:{shared_task_folder.uuids['drill']}"]
    assert result["diagnostics"]["excluded_by_as_of"] == 3


def test_as_of_before_completion_reports_task_pending(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    adapter = tw_adapter
    then = adapter.search("pg_upgrade", as_of="2025-02-15T00:00:00Z")["candidates"][0]
    later = adapter.search("pg_upgrade", as_of="2025-04-15T00:00:00Z")["candidates"][0]
    assert then["metadata"]["status"] == "pending"
    assert "valid_to" not in then
    assert later["metadata"]["status"] == "completed"
    assert later["valid_to"].startswith("2025-03-01")


def test_as_of_hides_annotations_added_after_the_instant(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    adapter = tw_adapter
    now = adapter.search("pg_upgrade")["candidates"][0]
    then = adapter.search("pg_upgrade", as_of="2025-02-15T00:00:00Z")["candidates"][0]
    assert [a["description"] for a in now["metadata"]["annotations"]] == [
        "rehearsed on the staging replica first"
    ]
    assert "annotations" not in then["metadata"]


def test_as_of_status_constraint_uses_status_at_that_instant(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    adapter = tw_adapter
    pending_then = adapter.search("status:pending project:infra", as_of="2025-02-15T00:00:00Z")
    assert {c["source_record_id"] for c in pending_then["candidates"]} == {
        shared_task_folder.uuids["drill"], shared_task_folder.uuids["pg16"],
    }


def test_searching_never_writes_to_the_data_folder(
    open_adapter: OpenAdapter, task_folder: TaskFolder
) -> None:
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in task_folder.path.iterdir() if p.is_file()}
    adapter = open_adapter(task_folder.path)
    adapter.search("restore drill")
    adapter.health()
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in task_folder.path.iterdir() if p.is_file()}
    assert after == before


def test_empty_query_is_not_applicable(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    result = tw_adapter.search("  ?! ")
    assert (result["outcome"], result["reason"]) == ("skipped", "not_applicable")


def test_unknown_setting_is_refused_at_handshake(
    shared_task_folder: TaskFolder, tmp_path
) -> None:
    process = AdapterProcess()
    try:
        with pytest.raises(AdapterError) as error:
            process.initialize(shared_task_folder.path, tmp_path / "w", {"binary": "task"})
    finally:
        process.close()
    assert error.value.code == -32602
    assert "binary" in error.value.message

from __future__ import annotations

import pytest

from .adapter_process import AdapterError, AdapterProcess
from .conftest import OpenAdapter, TaskFolder, requires_task, task

pytestmark = requires_task


def test_summary_is_one_line_with_status_and_project(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["drill"]
    result = tw_adapter.expand(f"tasks:{uuid}", "summary")
    assert "\n" not in result["content"]
    assert result["content"].startswith("Run the quarterly restore drill for the wiki database [")
    assert "pending" in result["content"] and "infra.backup" in result["content"]
    assert result["truncated"] is False


def test_excerpt_includes_fields_and_annotations(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["drill"]
    result = tw_adapter.expand(f"tasks:{uuid}", "excerpt")
    content = result["content"]
    assert "due 2030-01-15" in content.splitlines()[0]
    assert "due: " not in content  # a date without a time is not repeated as a field line
    assert "restored in 42 minutes from the restic snapshot" in content
    assert result["source_revision"].startswith("sha256:")
    assert result["provenance"] == f"task {uuid[:8]} (data)"


def test_full_adds_identifiers(tw_adapter: AdapterProcess, shared_task_folder: TaskFolder) -> None:
    uuid = shared_task_folder.uuids["drill"]
    content = tw_adapter.expand(f"tasks:{uuid}", "full")["content"]
    assert f"id: {uuid}" in content
    assert "task 1" in content
    assert "urgency:" in content


def test_context_adds_other_tasks_of_the_project(
    open_adapter: OpenAdapter, task_folder: TaskFolder
) -> None:
    task(task_folder.path, "add", "Test a restore of the mail server", "project:infra.backup")
    uuid = task_folder.uuids["drill"]
    adapter = open_adapter(task_folder.path)
    excerpt = adapter.expand(f"tasks:{uuid}", "excerpt")["content"]
    context = adapter.expand(f"tasks:{uuid}", "context")["content"]
    assert "mail server" not in excerpt
    assert "other tasks in project infra.backup:" in context
    assert "Test a restore of the mail server" in context
    assert "pg_upgrade" not in context


def test_expand_within_budget_is_cut_and_marked(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["drill"]
    result = tw_adapter.expand(f"tasks:{uuid}", "full", 100)
    assert len(result["content"].encode()) <= 100
    assert result["truncated"] is True
    assert result["truncation_boundary"] == "budget_bytes"
    assert result["content"].endswith("[truncated: budget_bytes]")


def test_budget_below_minimum_is_refused(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    uuid = shared_task_folder.uuids["drill"]
    with pytest.raises(AdapterError) as error:
        tw_adapter.expand(f"tasks:{uuid}", "full", 10)
    assert error.value.code == -32006


def test_unparseable_locator_is_unknown(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    with pytest.raises(AdapterError) as error:
        tw_adapter.expand("tasks:notes/restore.md#L1-L4")
    assert error.value.code == -32002


def test_uuid_not_in_store_is_expired(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    with pytest.raises(AdapterError) as error:
        tw_adapter.expand(
            "tasks:00000000-0000-4000-8000-000000000000"
        )
    assert error.value.code == -32003

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from .adapter_process import AdapterError, AdapterProcess
from .conftest import OpenAdapter, TaskFolder, requires_task

pytestmark = requires_task


def test_health_reports_program_version_counts_and_identity(
    tw_adapter: AdapterProcess, shared_task_folder: TaskFolder
) -> None:
    health = tw_adapter.health()
    assert (health["status"], health["coverage"]) == ("healthy", "complete")
    assert health["record_count"] == 5
    assert re.fullmatch(r"\d+\.\d+\.\d+", health["diagnostics"]["task_version"])
    assert health["diagnostics"]["status_counts"] == {"completed": 1, "deleted": 1, "pending": 3}
    assert health["diagnostics"]["store_identity"].startswith("dir:")
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", health["source_watermark"])


def test_watermark_follows_content_not_path_or_mtime(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder, task_folder: TaskFolder,
    tmp_path: Path,
) -> None:
    original = open_adapter(shared_task_folder.path, workdir=tmp_path / "a").health()
    for data_file in task_folder.path.glob("*.data"):
        data_file.touch()
    copy = open_adapter(task_folder.path, workdir=tmp_path / "b").health()
    assert copy["source_watermark"] == original["source_watermark"]
    assert copy["diagnostics"]["store_identity"] != original["diagnostics"]["store_identity"]


def test_missing_task_program_makes_search_unavailable(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder
) -> None:
    adapter = open_adapter(shared_task_folder.path, {"task_binary": "/nonexistent/bin/task"})
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000
    assert "/nonexistent/bin/task" in error.value.message
    assert "task_binary" in error.value.message


def test_missing_task_program_makes_health_unavailable(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder
) -> None:
    health = open_adapter(shared_task_folder.path, {"task_binary": "no-such-task-program"}).health()
    assert (health["status"], health["coverage"]) == ("unavailable", "unknown")
    assert "no-such-task-program" in health["diagnostics"]["reason"]


def test_missing_program_fails_even_when_the_cache_could_answer(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder, tmp_path: Path
) -> None:
    workdir = tmp_path / "shared-workdir"
    open_adapter(shared_task_folder.path, workdir=workdir).search("restore drill")
    broken = open_adapter(
        shared_task_folder.path, {"task_binary": "/nonexistent/bin/task"}, workdir=workdir
    )
    with pytest.raises(AdapterError) as error:
        broken.search("restore drill")
    assert error.value.code == -32000


def test_failing_task_program_is_unavailable_with_its_stderr(
    open_adapter: OpenAdapter, task_folder: TaskFolder, tmp_path: Path
) -> None:
    program = tmp_path / "task"
    program.write_text("#!/bin/sh\necho 'Taskwarrior database is locked' >&2\nexit 3\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    adapter = open_adapter(task_folder.path, {"task_binary": str(program)})
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000
    assert "exit 3" in error.value.message
    assert "Taskwarrior database is locked" in error.value.message


def test_corrupt_data_file_is_unavailable_not_empty(
    open_adapter: OpenAdapter, task_folder: TaskFolder
) -> None:
    (task_folder.path / "pending.data").write_text("this is not [taskwarrior data\n")
    adapter = open_adapter(task_folder.path)
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000
    assert "pending.data" in error.value.message
    health = adapter.health()
    assert health["status"] == "unavailable"
    assert "pending.data" in health["diagnostics"]["reason"]


def test_corruption_after_a_good_read_is_not_hidden_by_the_cache(
    open_adapter: OpenAdapter, task_folder: TaskFolder
) -> None:
    adapter = open_adapter(task_folder.path)
    assert adapter.search("restore drill")["candidates"]
    (task_folder.path / "pending.data").write_text("this is not [taskwarrior data\n")
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000


def test_missing_data_folder_is_unavailable_and_not_created(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    folder = tmp_path / "no-such-task-data"
    adapter = open_adapter(folder, {"mode": "taskwarrior"})
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert error.value.code == -32000
    assert adapter.health()["status"] == "unavailable"
    assert not folder.exists()


def test_folder_without_task_data_is_unavailable(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    adapter = open_adapter(folder)
    with pytest.raises(AdapterError) as error:
        adapter.search("restore drill")
    assert "pending.data" in error.value.message
    assert list(folder.iterdir()) == []

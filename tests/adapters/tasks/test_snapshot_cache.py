from __future__ import annotations

import os
from pathlib import Path

from .conftest import OpenAdapter, TaskFolder, requires_task, task

pytestmark = requires_task


def stable(result: dict) -> list[dict]:
    """Candidates without the per-request clock fields."""
    return [
        {k: v for k, v in c.items() if k not in ("observed_at", "confirmed_at")}
        for c in result["candidates"]
    ]


def test_unchanged_store_is_exported_once_per_process(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder
) -> None:
    adapter = open_adapter(shared_task_folder.path)
    first = adapter.search("restore drill")["diagnostics"]
    second = adapter.search("handover")["diagnostics"]
    assert (first["snapshot"], first["exports_run"]) == ("loaded", 1)
    assert (second["snapshot"], second["exports_run"]) == ("memory", 1)


def test_new_process_answers_from_the_workdir_cache_without_export(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder, tmp_path: Path
) -> None:
    workdir = tmp_path / "w"
    open_adapter(shared_task_folder.path, workdir=workdir).search("restore drill")
    diagnostics = open_adapter(shared_task_folder.path, workdir=workdir).search("restore")[
        "diagnostics"
    ]
    assert (diagnostics["snapshot"], diagnostics["exports_run"]) == ("cache", 0)


def test_changed_data_is_exported_again(
    open_adapter: OpenAdapter, task_folder: TaskFolder
) -> None:
    adapter = open_adapter(task_folder.path)
    assert adapter.search("certificate")["candidates"] == []
    task(task_folder.path, "add", "Renew the TLS certificate for git.example.internal")
    result = adapter.search("certificate")
    assert result["diagnostics"]["exports_run"] == 2
    assert [c["title"] for c in result["candidates"]] == [
        "Renew the TLS certificate for git.example.internal"
    ]


def test_touched_but_identical_data_is_revalidated_by_hash_without_export(
    open_adapter: OpenAdapter, task_folder: TaskFolder, tmp_path: Path
) -> None:
    workdir = tmp_path / "w"
    open_adapter(task_folder.path, workdir=workdir).search("restore drill")
    pending = task_folder.path / "pending.data"
    stat = pending.stat()
    os.utime(pending, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    diagnostics = open_adapter(task_folder.path, workdir=workdir).search("restore")["diagnostics"]
    assert (diagnostics["snapshot"], diagnostics["exports_run"]) == ("revalidated", 0)


def test_deleting_the_cache_changes_no_result(
    open_adapter: OpenAdapter, shared_task_folder: TaskFolder, tmp_path: Path
) -> None:
    workdir = tmp_path / "w"
    open_adapter(shared_task_folder.path, workdir=workdir).search("drill")
    cached = open_adapter(shared_task_folder.path, workdir=workdir).search("restore drill pg16")
    for entry in workdir.iterdir():
        entry.unlink()
    fresh = open_adapter(shared_task_folder.path, workdir=workdir).search("restore drill pg16")
    assert cached["diagnostics"]["snapshot"] == "cache"
    assert fresh["diagnostics"]["snapshot"] == "loaded"
    assert stable(fresh) == stable(cached)
    assert fresh["source_watermark"] == cached["source_watermark"]

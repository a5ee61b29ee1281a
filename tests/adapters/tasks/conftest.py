from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .adapter_process import AdapterProcess

TASK = shutil.which("task")
requires_task = pytest.mark.skipif(
    TASK is None, reason="Taskwarrior's `task` program is not installed (Debian: taskwarrior)"
)


def task(folder: Path, *arguments: str) -> str:
    """Run the real ``task`` the way a user would, against ``folder`` only."""
    assert TASK is not None
    env = {**os.environ, "TASKRC": os.devnull}
    env.pop("TASKDATA", None)
    completed = subprocess.run(
        [TASK, f"rc.data.location={folder}", "rc.confirmation=off", "rc.hooks=off",
         "rc.verbose=nothing", *arguments],
        env=env, capture_output=True, check=True, text=True,
    )
    return completed.stdout


@dataclass(frozen=True)
class TaskFolder:
    path: Path
    uuids: dict[str, str]  # fixture key -> uuid

    def exported(self) -> list[dict[str, Any]]:
        return json.loads(task(self.path, "export"))


def build_task_folder(folder: Path) -> TaskFolder:
    """Five tasks with fixed entry dates, one completed, one deleted, annotations."""
    task(folder, "add", "Run the quarterly restore drill for the wiki database",
         "project:infra.backup", "+backup", "priority:H", "due:2030-01-15", "entry:2025-01-10")
    task(folder, "add", "Upgrade PostgreSQL 15 to 16 on db-main with pg_upgrade",
         "project:infra.db", "+pg16", "priority:M", "entry:2025-02-01")
    task(folder, "add", "Prepare the on-call handover notes for Priya",
         "project:team", "+oncall", "entry:2025-04-01")
    task(folder, "add", "Walk through the release checklist for v2.4",
         "project:release", "entry:2025-05-01")
    task(folder, "add", "Replace the failing disk in the home-lab ZFS mirror",
         "project:homelab", "entry:2025-06-01")
    by_description = {t["description"]: t["uuid"] for t in json.loads(task(folder, "export"))}
    uuids = {
        "drill": by_description["Run the quarterly restore drill for the wiki database"],
        "pg16": by_description["Upgrade PostgreSQL 15 to 16 on db-main with pg_upgrade"],
        "handover": by_description["Prepare the on-call handover notes for Priya"],
        "release": by_description["Walk through the release checklist for v2.4"],
        "disk": by_description["Replace the failing disk in the home-lab ZFS mirror"],
    }
    task(folder, uuids["drill"], "annotate", "restored in 42 minutes from the restic snapshot")
    task(folder, uuids["pg16"], "annotate", "rehearsed on the staging replica first")
    task(folder, uuids["pg16"], "done")
    task(folder, uuids["pg16"], "modify", "end:2025-03-01")
    task(folder, uuids["release"], "delete")
    task(folder, "list")  # a user's next command: garbage collection renumbers the working set
    return TaskFolder(folder, uuids)


@pytest.fixture(scope="session")
def shared_task_folder(tmp_path_factory: pytest.TempPathFactory) -> TaskFolder:
    """Built once; tests that only read share it."""
    if TASK is None:
        pytest.skip("Taskwarrior's `task` program is not installed (Debian: taskwarrior)")
    return build_task_folder(tmp_path_factory.mktemp("taskwarrior") / "data")


@pytest.fixture
def task_folder(shared_task_folder: TaskFolder, tmp_path: Path) -> TaskFolder:
    """A private copy for tests that change the data."""
    copy = tmp_path / "data"
    shutil.copytree(shared_task_folder.path, copy)
    return TaskFolder(copy, shared_task_folder.uuids)


OpenAdapter = Callable[..., AdapterProcess]


@pytest.fixture
def open_adapter(tmp_path: Path) -> Iterator[OpenAdapter]:
    """Spawn and initialize adapter processes; all are shut down after the test."""
    processes: list[AdapterProcess] = []

    def spawn(
        location: Path | str, settings: dict[str, Any] | None = None,
        workdir: Path | None = None,
    ) -> AdapterProcess:
        process = AdapterProcess()
        processes.append(process)
        process.initialize(location, workdir or tmp_path / "workdir", settings)
        return process

    yield spawn
    for process in processes:
        process.close()


@pytest.fixture(scope="session")
def tw_adapter(
    shared_task_folder: TaskFolder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AdapterProcess]:
    """One adapter process over the shared folder, for tests that only read."""
    process = AdapterProcess()
    process.initialize(shared_task_folder.path, tmp_path_factory.mktemp("tw-workdir"))
    yield process
    process.close()

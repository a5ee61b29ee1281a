"""What a user sees for a task named by id, through the real ``recall`` and ``task``.

A short UUID, ``task <n>`` and, in a query that is only a number, ``<n>`` all
name one task and show the ``exact`` pill, the working-set number read at the
instant asked. A todo.txt line marked done without a date is not current.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import requires_task, task

RECALL = Path(sys.executable).parent / "recall"

Recall = Callable[..., subprocess.CompletedProcess[str]]


def recall_over(tmp_path: Path, location: Path) -> Recall:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }

    def recall(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(RECALL), *args], capture_output=True, text=True, env=env, timeout=60)

    made = recall("init", "--tasks", str(location))
    assert made.returncode == 0, made.stderr
    return recall


@pytest.fixture
def taskwarrior(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "data"
    for description in ("Run the restore drill", "Replace the failing disk", "Water the plants"):
        task(folder, "add", description)
    uuids = {t["description"]: t["uuid"] for t in json.loads(task(folder, "export"))}
    return folder, uuids


def first_line(out: str) -> str:
    return out.split("\n\n", 1)[1].splitlines()[0]


@requires_task
@pytest.mark.parametrize("question", ["{short}", "task 3", "3"])
def test_a_task_named_by_id_is_marked_exact(
    tmp_path: Path, taskwarrior: tuple[Path, dict[str, str]], question: str
) -> None:
    folder, uuids = taskwarrior
    plants = uuids["Water the plants"]
    run = recall_over(tmp_path, folder)("query", question.format(short=plants[:8]))
    assert run.returncode == 0, run.stderr
    assert first_line(run.stdout) == f"1. tasks:{plants}  exact"


@requires_task
def test_a_working_set_id_is_read_at_the_instant_asked(
    tmp_path: Path, taskwarrior: tuple[Path, dict[str, str]]
) -> None:
    folder, uuids = taskwarrior
    recall = recall_over(tmp_path, folder)
    assert first_line(recall("query", "task 2").stdout).startswith(f"1. tasks:{uuids['Replace the failing disk']}")
    task(folder, uuids["Run the restore drill"], "done")
    assert first_line(recall("query", "task 2").stdout) == f"1. tasks:{uuids['Water the plants']}  exact"


def test_a_done_line_without_a_date_is_withheld_as_ended(tmp_path: Path) -> None:
    todo = tmp_path / "todo.txt"
    todo.write_text("2026-01-05 feed the zebra\nx done zebra task\n")
    run = recall_over(tmp_path, todo)("query", "--json", "--include-stale", "zebra", "task")
    assert run.returncode == 0, run.stderr
    [done] = [r for r in json.loads(run.stdout)["results"] if r["title"] == "done zebra task"]
    assert done["verdict"] == "completed"
    shown = recall_over(tmp_path / "again", todo)("query", "--json", "zebra", "task")
    # done on a day the line does not say: withheld as completed, with no date claimed
    assert [(s["reason"], s.get("completed_at")) for s in json.loads(shown.stdout)["suppressed"]] == [
        ("completed", None)
    ]

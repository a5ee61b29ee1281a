"""Instants at the calendar's edges answer: each adapter clamps what it cannot hold,
never failing with an overflow (real CLI, real notes and tasks adapters)."""

from __future__ import annotations

import pytest

from tests.support.recall_home import RecallHome, write_note

LAST_INSTANT = "9999-12-31T23:59:59Z"
FIRST_INSTANT = "0001-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> RecallHome:
    root = tmp_path_factory.mktemp("edges")
    notes = root / "notes"
    write_note(notes, "budget.md", "# Budget\n\nThe budget review is on Friday.\n", modified="2025-03-01")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "todo.txt").write_text("2025-03-01 review the budget +finance\n")
    return RecallHome.build(root, notes={"notes": notes}, others={"tasks": ("tasks", tasks / "todo.txt")})


def _outcomes(run: object) -> dict[str, str]:
    return {r["source_id"]: r["outcome"] for r in run.json["source_outcomes"]}  # type: ignore[attr-defined]


def test_the_last_instant_of_the_calendar_sees_everything(home: RecallHome) -> None:
    run = home.recall("query", "budget", "--as-of", LAST_INSTANT, "--json", "--explain")

    assert run.code == 0, run.stdout + run.stderr
    assert _outcomes(run) == {"notes": "success", "tasks": "success"}
    assert {r["primary"]["source_id"] for r in run.json["results"]} == {"notes", "tasks"}


def test_the_first_instant_of_the_calendar_knew_nothing_yet(home: RecallHome) -> None:
    run = home.recall("query", "budget", "--as-of", FIRST_INSTANT, "--json", "--explain")

    assert run.code == 2, run.stdout + run.stderr  # abstained: every source answered, none knew
    assert _outcomes(run) == {"notes": "success", "tasks": "success"}
    assert run.json["results"] == []

"""What is withheld is counted as a person counts it, and named as they call it: a
superseded note of four sections is one superseded note, a completed task is
``completed`` with its date (real CLI, real notes and tasks adapters)."""

from __future__ import annotations

import pytest

from tests.support.recall_home import RecallHome, write_note

OLD_PLAN = """# Budget plan: draft

## Travel
The budget plan for travel.

## Hardware
The budget plan for hardware.

## Hosting
The budget plan for hosting.

## Training
The budget plan for training.
"""

NEW_PLAN = """---
supersedes: ["plans/q3: draft.md"]
---
# Budget plan

The budget plan, as agreed.
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> RecallHome:
    root = tmp_path_factory.mktemp("withheld")
    notes = root / "notes"
    write_note(notes, "plans/q3: draft.md", OLD_PLAN, modified="2025-01-10")
    write_note(notes, "plans/agreed.md", NEW_PLAN, modified="2025-02-10")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "todo.txt").write_text(
        "x 2025-03-04 2025-02-01 renew the hosting contract\n2025-02-01 review the hosting invoices\n"
    )
    return RecallHome.build(root, notes={"notes": notes}, others={"tasks": ("tasks", tasks / "todo.txt")})


def test_a_superseded_note_of_four_sections_is_one_withheld_record(home: RecallHome) -> None:
    run = home.recall("query", "budget plan", "--json")

    superseded = [s for s in run.json["suppressed"] if s["reason"] == "superseded"]
    assert superseded == [
        {
            "reason": "superseded",
            "count": 1,
            "lineage_root": superseded[0]["lineage_root"],
            "successor": "notes:plans/agreed.md#L4-L6",
        }
    ]
    assert superseded[0]["lineage_root"].split(":", 1)[1].startswith("plans/q3: draft.md#L")
    for flags in ((), ("--explain",)):
        printed = home.recall("query", "budget plan", *flags).stdout
        assert "superseded  count 1  lineage notes:plans/q3: draft.md#L" in printed
        assert "successor notes:plans/agreed.md#L4-L6" in printed


def test_the_hook_counts_the_superseded_note_once(home: RecallHome) -> None:
    run = home.recall("hook", "pre-reply", stdin="what is the budget plan")

    assert run.code == 0, run.stderr
    assert "1 superseded withheld" in run.stdout


def test_the_successor_a_withheld_note_names_expands(home: RecallHome) -> None:
    expanded = home.recall("expand", "notes:plans/agreed.md#L4-L6")

    assert expanded.code == 0, expanded.stderr
    assert "as agreed" in expanded.stdout


def test_a_completed_task_is_withheld_as_completed_with_its_date(home: RecallHome) -> None:
    run = home.recall("query", "hosting contract", "--json")

    withheld = [s for s in run.json["suppressed"] if s["reason"] in ("completed", "expired")]
    assert [(s["reason"], s["count"], s["completed_at"]) for s in withheld] == [
        ("completed", 1, "2025-03-04T00:00:00Z")
    ]
    printed = home.recall("query", "hosting contract").stdout
    assert "completed  count 1  lineage tasks:" in printed
    assert "completed 2025-03-04T00:00:00Z" in printed
    assert "expired" not in printed

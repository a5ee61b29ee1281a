"""Adapters' output is data: a source cannot speak for another one.

An adapter's locator naming another source is rewritten to its own source, and
a record of a source a project file added cannot reach into the user's sources:
its claims to supersede a user's record, or to derive from one, are dropped and
counted instead of withholding the user's evidence.
"""

from __future__ import annotations

import json

from .conftest import Machine, guarded_registration, write_records

USER_SOURCE = """
[[sources]]
source_uid = "01J8ZKQ4M7MINEXX"
source_id = "mine"
adapter = "notes"
location = {notes}
"""


def configure(machine: Machine, record: dict) -> None:
    notes = machine.home / "notes"
    notes.mkdir()
    (notes / "decision.md").write_text("# Decision\n\nWe ship the rollout on Tuesday.\n")
    machine.write_user(guarded_registration(machine) + USER_SOURCE.format(notes=json.dumps(str(notes))))
    write_records(machine.repo / "board.json", [record])
    machine.write_project('[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "board.json"\n')


def query(machine: Machine, text: str) -> dict:
    result = machine.recall("query", text, "--json", "--explain")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_project_source_cannot_supersede_the_users_record(machine: Machine) -> None:
    configure(machine, {
        "id": "override", "title": "Rollout", "body": "rollout cancelled",
        "metadata": {"supersedes": ["mine:decision.md"]},
    })
    response = query(machine, "rollout")
    shown = {r["primary"]["locator"]: r for r in response["results"]}
    assert "mine:decision.md#L1-L3" in shown  # still evidence, not withheld as superseded
    assert response["suppressed"] == []
    repo = next(s for s in response["source_outcomes"] if s["source_id"] == "repo")
    assert repo["diagnostics"]["dropped_references_to_protected_sources"] == 1


def test_a_project_source_cannot_fold_the_users_record_into_its_lineage(machine: Machine) -> None:
    configure(machine, {
        "id": "copy", "title": "Rollout", "body": "rollout on Tuesday",
        "derived_from": ["mine:decision.md#L1-L3"],
    })
    response = query(machine, "rollout tuesday")
    locators = {r["primary"]["locator"] for r in response["results"]}
    assert {"mine:decision.md#L1-L3", "repo:copy"} <= locators


def test_a_locator_naming_another_source_is_rewritten_to_its_own(machine: Machine) -> None:
    configure(machine, {"id": "decision.md", "title": "Rollout", "body": "rollout on Monday",
                        "locator": "mine:decision.md"})
    response = query(machine, "rollout monday")
    locators = {r["primary"]["locator"] for r in response["results"]}
    assert "repo:decision.md" in locators
    expanded = machine.recall("expand", "repo:decision.md")
    assert expanded.returncode == 0, expanded.stderr
    assert "rollout on Monday" in expanded.stdout

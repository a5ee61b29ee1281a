"""A source is never less sensitive than its adapter declares, whatever a layer says (attack 5).

The guarded adapter declares its records ``confidential``; a profile whose
ceiling is ``internal`` must not show them, even when a file calls the source
``public``, on query, expand and sources.
"""

from __future__ import annotations

import json

import pytest

from .conftest import Machine, guarded_registration, write_records

USER_NOTES = """
[[sources]]
source_uid = "01J8ZKQ4M7NOTESX"
source_id = "notes"
adapter = "notes"
location = {notes}

[profiles.work]
sources = ["notes"]
max_sensitivity = "internal"
"""
LOWERED = '[[sources]]\n{uid}source_id = "board"\nadapter = "guarded"\nlocation = {records}\nsensitivity = "public"\n'


def configure(machine: Machine, layer: str) -> None:
    notes = machine.home / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nNothing about the board here.\n")
    records = write_records(
        machine.repo / "board.json",
        [{"id": "minutes", "title": "Board minutes", "body": "the acquisition closes in May"}],
    )
    user = guarded_registration(machine, floor="confidential") + USER_NOTES.format(
        notes=json.dumps(str(notes))
    )
    if layer == "user":
        source = LOWERED.format(uid='source_uid = "01J8ZKQ4M7BOARDX"\n', records=json.dumps(str(records)))
        machine.write_user(source + user.replace('sources = ["notes"]', 'sources = ["notes", "board"]'))
    else:
        machine.write_user(user)
        machine.write_project(
            LOWERED.format(uid="", records='"board.json"') + '\n[profiles.work]\nsources = ["board"]\n'
        )


@pytest.mark.parametrize("layer", ["project", "user"])
def test_a_lowered_sensitivity_does_not_get_past_the_adapters_floor(machine: Machine, layer: str) -> None:
    configure(machine, layer)
    result = machine.recall("query", "acquisition", "--profile", "work", "--json", "--explain")
    response = json.loads(result.stdout)
    # the record's own words, not the question (which explain may echo back)
    assert "acquisition closes" not in result.stdout and "Board minutes" not in result.stdout
    board = next(s for s in response["source_outcomes"] if s["source_id"] == "board")
    assert (board["outcome"], board["reason"]) == ("skipped", "sensitivity_ceiling")

    expanded = machine.recall("expand", "board:minutes", "--profile", "work")
    assert expanded.returncode != 0
    assert "acquisition closes" not in expanded.stdout
    assert "declares source board's records confidential" in expanded.stderr

    listing = json.loads(machine.recall("sources", "--profile", "work", "--json").stdout)
    row = next(s for s in listing["sources"] if s["source_id"] == "board")
    assert (row["sensitivity"], row["permitted"]) == ("confidential", False)


def test_under_a_ceiling_that_allows_the_floor_the_records_are_marked_at_it(machine: Machine) -> None:
    configure(machine, "project")
    project = machine.repo / "recall.toml"
    project.write_text(
        project.read_text() + '\n[profiles.board]\nsources = ["board"]\nmax_sensitivity = "confidential"\n'
    )
    result = machine.recall("query", "acquisition", "--profile", "board", "--json", "--explain")
    assert result.returncode == 0, result.stderr
    (hit,) = json.loads(result.stdout)["results"]
    assert hit["primary"]["sensitivity"] == "confidential"  # the adapter said public per record

"""A malformed candidate is one part of an answer: dropped, counted and named, the rest
standing and the source partial, through the real CLI and real adapter processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.recall_home import RecallHome, write_note


def _record(rid: str, wire: dict[str, Any] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": rid, "title": f"Budget {rid}", "body": f"budget figures of {rid}"}
    if wire:
        record["wire"] = wire
    return record


def _report(run: Any, source_id: str) -> dict[str, Any]:
    return next(r for r in run.json["source_outcomes"] if r["source_id"] == source_id)


def test_three_malformed_candidates_of_five_leave_two_and_a_partial_source(tmp_path: Path) -> None:
    records = [
        _record("r1"),
        _record("r2", {"locator": "fx:bad\nname"}),  # refused on the wire: one line only
        _record("r3"),
        _record("r4", {"local_rank": 0}),
        _record("r5", {"locator": "fx:esc\x1b[31mred"}),  # fits the wire, cannot be printed exact
    ]
    home = RecallHome.build(tmp_path, notes={}, fixtures={"fx": (records, {})})

    run = home.recall("query", "budget figures", "--json", "--explain")

    assert run.code == 3, run.stderr  # degraded coverage, not a failed query
    assert sorted(r["primary"]["locator"] for r in run.json["results"]) == ["fx:r1", "fx:r3"]
    report = _report(run, "fx")
    assert report["outcome"] == "partial"
    assert report["candidates"] == 2
    assert report["diagnostics"]["dropped_malformed_candidates"] == 3
    named = {m["candidate_id"]: m for m in report["diagnostics"]["malformed_candidates"]}
    assert named.keys() == {"r2", "r4", "r5"}
    assert named["r2"]["locator"] == "fx:bad\\nname" and named["r2"]["why"].startswith("locator: ")
    assert named["r4"]["why"].startswith("local_rank: ")
    assert named["r5"]["locator"] == "fx:esc\\x1b[31mred"
    assert "control character \\x1b" in named["r5"]["why"]
    assert run.json["coverage"] == "degraded"

    human = home.recall("query", "budget figures")
    assert human.code == 3
    assert "\x1b" not in human.stdout and "fx (partial)" in human.stdout


def test_a_note_named_with_a_newline_is_declined_and_the_rest_answers(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_note(notes, "plain.md", "# Budget\n\nThe budget review is on Friday.\n")
    write_note(notes, "odd\nname.md", "# Budget odd\n\nBudget numbers for the odd file.\n")
    home = RecallHome.build(tmp_path, notes={"notes": notes})

    run = home.recall("query", "budget", "--json", "--explain")

    assert run.code == 0, run.stdout + run.stderr
    assert [r["primary"]["locator"] for r in run.json["results"]] == ["notes:plain.md#L1-L3"]
    assert _report(run, "notes")["outcome"] == "success"
    sources = home.recall("sources", "--json")
    declined = sources.json["sources"][0]["health"]["diagnostics"]["declined"]
    # named escaped: a newline in a name is shown, not printed across lines
    assert [(d["path"], "control character" in d["reason"]) for d in declined] == [("odd\\nname.md", True)]

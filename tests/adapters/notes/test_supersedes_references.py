"""What ``supersedes`` may name, and a reference that names nothing is said, not silent:
``recall doctor`` and ``recall sources`` flag it (real CLI, real notes adapter)."""

from __future__ import annotations

from pathlib import Path

from tests.support.recall_home import RecallHome, write_note

OLD = """---
id: ADR-7
---
# Hosting choice

We host the wiki on the Hetzner box.
"""


def _notes_check(run: object, name: str) -> dict:
    return next(c for c in run.json["checks"] if c["name"] == name)  # type: ignore[attr-defined]


def test_supersedes_may_name_a_note_by_the_id_it_declares(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_note(notes, "decisions/hosting-2023.md", OLD, modified="2024-01-01")
    write_note(notes, "decisions/hosting-2025.md",
               "---\nsupersedes: ADR-7\n---\n# Hosting choice\n\nWe host the wiki on Fly.io.\n",
               modified="2025-01-01")
    home = RecallHome.build(tmp_path, notes={"notes": notes})

    run = home.recall("query", "wiki hosting choice", "--json")
    assert [r["locator"] for r in run.json["results"]] == ["notes:decisions/hosting-2025.md#L4-L6"]
    assert [(s["reason"], s["count"]) for s in run.json["suppressed"]] == [("superseded", 1)]
    assert _notes_check(home.recall("doctor", "--json"), "serving")["status"] == "pass"


def test_a_supersedes_that_names_no_note_is_flagged_by_doctor_and_sources(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_note(notes, "decisions/hosting-2023.md", OLD.replace("ADR-7", "ADR-8"))
    home = RecallHome.build(tmp_path, notes={"notes": notes})
    write_note(notes, "decisions/hosting-2025.md",
               "---\nsupersedes: ADR-7\n---\n# Hosting choice\n\nWe host the wiki on Fly.io.\n")
    home.recall("refresh", "--source", "notes")

    doctor = home.recall("doctor", "--json")
    assert doctor.code == 3, doctor.stdout
    serving = _notes_check(doctor, "serving")
    assert serving["status"] == "degraded"
    [problem] = serving["problems"]
    assert problem["source_id"] == "notes"
    assert "decisions/hosting-2025.md: 'ADR-7' names no note" in problem["message"]
    assert "answers come from less" not in problem["message"]

    sources = home.recall("sources", "--json")
    [row] = sources.json["sources"]
    assert row["health"]["status"] == "degraded"
    assert "'ADR-7' names no note" in row["health"]["diagnostics"]["warning"]
    printed = home.recall("sources").stdout
    assert "health degraded" in printed and "'ADR-7' names no note" in printed

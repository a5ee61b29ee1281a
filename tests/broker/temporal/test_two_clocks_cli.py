"""Two clocks through the real ``recall query``: ``--valid-at`` (valid time) beside ``--as-of`` (transaction time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.recall_home import RecallHome, write_note

TARGET_2024 = """---
title: Deploy target for 2024
valid_from: 2024-01-01
valid_until: 2024-12-31
---
# Deploy target

In 2024 the wiki deploys to the Hetzner box with rsync.
"""

TARGET_2025 = """---
title: Deploy target from 2025
valid_from: 2025-01-01
supersedes: target-2024
---
# Deploy target

From 2025 the wiki deploys to Fly.io with flyctl.
"""

QUESTION = "where does the wiki deploy"


@pytest.fixture
def written_this_year(tmp_path: Path) -> RecallHome:
    """Both notes written now, declaring validity in the past: only valid time reaches them."""
    notes = tmp_path / "notes"
    write_note(notes, "target-2024.md", TARGET_2024)
    write_note(notes, "target-2025.md", TARGET_2025)
    return RecallHome.build(tmp_path, notes={"notes": notes})


@pytest.fixture
def written_over_time(tmp_path: Path) -> RecallHome:
    """The 2024 note written in February 2024, its successor in November 2024."""
    notes = tmp_path / "notes"
    write_note(notes, "target-2024.md", TARGET_2024, modified="2024-02-01")
    write_note(notes, "target-2025.md", TARGET_2025, modified="2024-11-15")
    return RecallHome.build(tmp_path, notes={"notes": notes})


def shown(run) -> list[str]:
    return [r["locator"].split("#")[0] for r in run.json["results"]]


def test_now_the_successor_is_current(written_this_year):
    run = written_this_year.recall("query", QUESTION, "--json")
    assert run.code == 0, run.stderr
    assert shown(run) == ["notes:target-2025.md"]


def test_as_of_a_past_instant_finds_nothing_the_files_were_not_written_yet(written_this_year):
    run = written_this_year.recall("query", QUESTION, "--as-of", "2024-06-01", "--json")
    assert run.code == 2, run.stderr
    assert run.json["outcome"] == "abstained"


def test_valid_at_a_past_instant_answers_what_was_true_then(written_this_year):
    run = written_this_year.recall("query", QUESTION, "--valid-at", "2024-06-01", "--json")
    assert run.code == 0, run.stderr
    assert shown(run) == ["notes:target-2024.md"]
    assert [(s["reason"], s["lineage_root"].split("#")[0]) for s in run.json["suppressed"]] == [
        ("not_yet_valid", "UIDNOTES0000NOTES:target-2025.md")]


def test_explain_names_the_clock_behind_each_verdict(written_this_year):
    run = written_this_year.recall(
        "query", QUESTION, "--valid-at", "2024-06-01", "--include-stale", "--explain", "--json")
    assert run.code == 0, run.stderr
    temporal = {r["primary"]["locator"].split("#")[0]: r["explanation"]["temporal"]
                for r in run.json["results"]}
    assert temporal["notes:target-2024.md"]["verdict"] == "current"
    assert temporal["notes:target-2025.md"]["verdict"] == "not_yet_valid"
    assert {t["clock"] for t in temporal.values()} == {"valid_time"}
    assert {t["evaluated_at"] for t in temporal.values()} == {"2024-06-01T00:00:00Z"}
    human = written_this_year.recall("query", QUESTION, "--valid-at", "2024-06-01", "--explain")
    assert "verdict:       current by valid time (valid time 2024-06-01T00:00:00Z" in human.stdout


def test_both_clocks_what_we_believed_in_december_about_march(written_over_time):
    run = written_over_time.recall(
        "query", QUESTION, "--as-of", "2024-12-01", "--valid-at", "2025-03-01", "--json")
    assert run.code == 0, run.stderr
    assert shown(run) == ["notes:target-2025.md"]
    assert [s["reason"] for s in run.json["suppressed"]] == ["superseded"]


def test_both_clocks_before_the_successor_was_written(written_over_time):
    run = written_over_time.recall(
        "query", QUESTION, "--as-of", "2024-06-01", "--valid-at", "2025-03-01", "--json")
    assert run.code == 2, run.stderr
    assert [s["reason"] for s in run.json["suppressed"]] == ["expired"]


def test_a_record_written_after_as_of_is_not_yet_known(tmp_path):
    """An adapter whose as_of filter is weaker than it declares: the broker's clock still holds."""
    notes = tmp_path / "notes"
    write_note(notes, "readme.md", "# Readme\n\nNothing about deploys.\n")
    records = [
        {"id": "plan-a", "title": "Deploy plan A", "body": "the wiki deploy plan",
         "event_time": "2024-03-01T00:00:00Z"},
        {"id": "plan-b", "title": "Deploy plan B", "body": "the wiki deploy plan",
         "event_time": "2024-09-01T00:00:00Z"},
    ]
    home = RecallHome.build(tmp_path, notes={"notes": notes}, fixtures={"plans": (records, {})})
    run = home.recall("query", "wiki deploy plan", "--as-of", "2024-06-01", "--json")
    assert run.code == 0, run.stderr
    assert shown(run) == ["plans:plan-a"]
    assert [s["reason"] for s in run.json["suppressed"]] == ["not_yet_known"]
    explained = home.recall("query", "wiki deploy plan", "--as-of", "2024-06-01", "--include-stale",
                            "--explain", "--json").json
    late = next(r for r in explained["results"] if r["primary"]["locator"] == "plans:plan-b")
    assert late["verdict"] == "not_yet_known"
    assert late["explanation"]["temporal"]["clock"] == "transaction_time"
    assert late["explanation"]["temporal"]["known_at"] == "2024-06-01T00:00:00Z"


def test_valid_at_must_be_a_time(written_this_year):
    run = written_this_year.recall("query", QUESTION, "--valid-at", "mid-2024")
    assert run.code == 1
    assert "--valid-at: 'mid-2024' is not a time" in run.stderr


def test_two_successors_claiming_one_note_mark_it_ambiguous_and_withhold_nothing(tmp_path):
    notes = tmp_path / "notes"
    write_note(notes, "target-2024.md", TARGET_2024.replace("valid_until: 2024-12-31\n", ""))
    write_note(notes, "fly.md", TARGET_2025.replace("target-2024", "target-2024.md"))
    write_note(notes, "render.md", "---\ntitle: Deploy target Render\nsupersedes: target-2024\n---\n"
               "# Deploy target\n\nThe wiki deploys to Render.\n")
    home = RecallHome.build(tmp_path, notes={"notes": notes})
    run = home.recall("query", "wiki deploy target", "--json", "--explain")
    assert run.code == 0, run.stderr
    results = {r["primary"]["locator"].split("#")[0]: r for r in run.json["results"]}
    assert set(results) == {"notes:target-2024.md", "notes:fly.md", "notes:render.md"}
    contested = results["notes:target-2024.md"]
    assert contested["verdict"] == "ambiguous_supersession"
    claimants = [c.split("#")[0] for c in contested["explanation"]["temporal"]["claimed_by"]]
    assert claimants == ["notes:fly.md", "notes:render.md"]
    assert not [s for s in run.json["suppressed"] if s["reason"] == "superseded"]
    human = home.recall("query", "wiki deploy target").stdout
    assert "ambiguous_supersession claimed by notes:fly.md#" in human

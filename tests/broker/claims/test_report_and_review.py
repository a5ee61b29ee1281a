"""Agents report, people decide: ``recall report-stale`` and ``recall review`` through the real CLI."""

from __future__ import annotations

import json

from tests.broker.claims.conftest import (
    NEW,
    NEW_LOCATOR,
    NEW_QUOTE,
    OLD_LOCATOR,
    OLD_QUOTE,
    QUESTION,
    report,
)
from tests.support.recall_home import RecallHome, write_note


def shown(home) -> list[str]:
    return [r["locator"].split("#")[0] for r in home.recall("query", QUESTION, "--json").json["results"]]


def queued_id(run) -> str:
    assert run.code == 0, run.stderr
    assert run.json["status"] == "queued"
    return run.json["claim"]["id"]


def test_a_report_changes_nothing_until_a_person_accepts_it(home):
    claim = queued_id(report(home))
    assert "notes:borg.md" in shown(home)
    listed = home.recall("review", "list")
    assert claim in listed.stdout
    assert OLD_QUOTE[:30] in listed.stdout and NEW_QUOTE[:30] in listed.stdout
    accepted = home.recall("review", "accept", claim, "--reviewer", "Ada")
    assert accepted.code == 0, accepted.stderr
    assert shown(home) == ["notes:restic.md", "tasks:252d654db424"]
    withheld = home.recall("query", QUESTION, "--json").json["suppressed"]
    assert [(s["reason"], s["successor"].split("#")[0]) for s in withheld] == [
        ("superseded", "notes:restic.md")]
    assert "no claims pending review" in home.recall("review").stdout


def test_accept_adds_one_front_matter_line_and_keeps_the_rest_of_the_file(home):
    claim = queued_id(report(home))
    home.recall("review", "accept", claim, "--reviewer", "Ada")
    after = (home.root / "notes" / "restic.md").read_text()
    assert after == NEW.replace("tags: [backup]\n", "tags: [backup]\nsupersedes: borg.md\n")


def test_a_rejected_claim_is_refused_at_every_later_report(home):
    claim = queued_id(report(home))
    rejected = home.recall("review", "reject", claim[:6], "--reviewer", "Ada",
                           "--reason", "restic is only for the laptops")
    assert rejected.code == 0, rejected.stderr
    again = report(home)
    assert again.code == 1
    assert "rejected by Ada" in again.stderr and "restic is only for the laptops" in again.stderr
    other_quote = report(home, new_quote="every server is backed up nightly with restic")
    assert other_quote.code == 1 and "rejected by Ada" in other_quote.stderr
    assert "notes:borg.md" in shown(home)
    assert "supersedes" not in (home.root / "notes" / "restic.md").read_text()


def test_a_quote_that_is_not_verbatim_is_refused(home):
    run = report(home, old_quote="backed up nightly using Borg to the storage box")
    assert run.code == 1
    assert "does not occur verbatim" in run.stderr
    assert "no claims pending review" in home.recall("review").stdout


def test_a_locator_that_does_not_expand_is_refused(home):
    run = report(home, old_locator="notes:borg.md#L1-L2")
    assert run.code == 1
    assert "does not expand" in run.stderr


def test_a_report_on_a_task_is_refused_with_the_reason(home):
    task = home.recall("query", "nightly Borg backup", "--json", "--scope", "source=tasks").json
    locator = task["results"][0]["locator"]
    run = report(home, old_locator=locator, old_quote="Check the nightly Borg backup")
    assert run.code == 1
    assert "a task has no front matter" in run.stderr


def test_a_report_on_a_polign_belief_is_refused_with_the_reason(tmp_path):
    """Refused on the source's kind, before anything is asked of the store."""
    notes = tmp_path / "notes"
    write_note(notes, "restic.md", NEW)
    home = RecallHome.build(tmp_path, notes={"notes": notes},
                            others={"events": ("eventstore", tmp_path / "store")})
    run = report(home, old_locator="events:belief/user/backup_tool#ev-1", old_quote="borg nightly backups")
    assert run.code == 1
    assert "is a Polign Recall store: a belief is corrected in Polign itself" in run.stderr


def test_accept_fails_safely_when_the_note_changed_since_the_report(home):
    claim = queued_id(report(home))
    note = home.root / "notes" / "restic.md"
    edited = note.read_text() + "\nA line added after the report.\n"
    note.write_text(edited)
    run = home.recall("review", "accept", claim, "--reviewer", "Ada")
    assert run.code == 1
    assert "changed since the claim was reported; nothing was edited" in run.stderr
    assert note.read_text() == edited
    assert claim in home.recall("review").stdout


def test_the_same_claim_twice_is_refused_while_pending(home):
    queued_id(report(home))
    again = report(home)
    assert again.code == 1 and "already pending review" in again.stderr


def test_a_decided_claim_cannot_be_decided_again(home):
    claim = queued_id(report(home))
    home.recall("review", "accept", claim, "--reviewer", "Ada")
    again = home.recall("review", "reject", claim, "--reviewer", "Bob", "--reason", "late")
    assert again.code == 1 and "already accepted by Ada" in again.stderr


def test_the_queue_and_ledger_are_append_only_files_with_a_schema_version(home):
    claim = queued_id(report(home))
    home.recall("review", "reject", claim, "--reviewer", "Ada", "--reason", "not the same scope")
    folder = home.root / "state" / "recall" / "claims"
    queue = [json.loads(line) for line in (folder / "queue.jsonl").read_text().splitlines()]
    ledger = [json.loads(line) for line in (folder / "rejections.jsonl").read_text().splitlines()]
    assert queue[0] == {"schema": 1, "kind": "recall.claims.queue"}
    assert [e["event"] for e in queue[1:]] == ["reported", "rejected"]
    assert ledger[0] == {"schema": 1, "kind": "recall.claims.rejections"}
    assert ledger[1]["key"] == queue[1]["claim"]["key"]


def test_a_corrupted_queue_is_reported_and_never_emptied(home):
    queued_id(report(home))
    queue = home.root / "state" / "recall" / "claims" / "queue.jsonl"
    damaged = queue.read_bytes() + b'{"event": "repo'
    queue.write_bytes(damaged)
    listed = home.recall("review")
    assert listed.code == 1
    assert "is corrupted at line 3 (the last line is incomplete)" in listed.stderr
    refused = report(home, new_quote="Since March every server")
    assert refused.code == 1 and "corrupted" in refused.stderr
    assert queue.read_bytes() == damaged


def test_a_queue_from_a_newer_schema_is_refused_not_rewritten(home):
    folder = home.root / "state" / "recall" / "claims"
    folder.mkdir(parents=True)
    (folder / "queue.jsonl").write_text('{"schema": 2, "kind": "recall.claims.queue"}\n')
    listed = home.recall("review")
    assert listed.code == 1 and "has schema 2; this recall reads schema 1" in listed.stderr


def test_review_without_a_reviewer_is_a_usage_error(home):
    claim = queued_id(report(home))
    run = home.recall("review", "accept", claim)
    assert run.code == 1 and "--reviewer NAME" in run.stderr


def test_locators_are_reported_as_given(home):
    data = report(home).json["claim"]
    assert (data["successor"]["locator"], data["superseded"]["locator"]) == (NEW_LOCATOR, OLD_LOCATOR)
    assert data["successor"]["identity"].endswith(":restic.md")


def test_accept_on_an_lf_note_with_one_pasted_crlf_line_edits_its_front_matter_in_place(home):
    note = home.root / "notes" / "restic.md"
    pasted = NEW.replace("tags: [backup]\n", "valid_until: 2099-12-31\n").replace(
        "# Backups\n", "# Backups\r\n")
    note.write_bytes(pasted.encode())
    assert home.recall("refresh", "--source", "notes").code == 0
    claim = queued_id(report(home))
    accepted = home.recall("review", "accept", claim, "--reviewer", "Ada")
    assert accepted.code == 0, accepted.stderr
    assert note.read_bytes() == pasted.replace(
        "valid_until: 2099-12-31\n", "valid_until: 2099-12-31\nsupersedes: borg.md\n").encode()
    found = home.recall("query", QUESTION, "--json").json["results"]
    assert [r["title"] for r in found if r["locator"].startswith("notes:restic.md")] == [
        "Backups run with restic"]

"""A disk that fills up mid-write never leaves half a line in the claims queue or the
ledger, nor an accept half done: the command says so in one line and exits 1."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from broker.claims.claim import Claim, RecordRef
from tests.broker.claims.conftest import NEW, report
from tests.broker.claims.test_report_and_review import queued_id
from tests.support.full_disk import PAGE, fill, full_disk, room_left_in_last_page
from tests.support.recall_home import RecallHome

__all__ = ["full_disk"]  # the fixture, used by name

HEADER = b'{"schema":1,"kind":"recall.claims.queue"}\n'
LEFT = 20
"""Bytes left in the queue's last page: the next line starts there and is cut short."""
ONE_LINE = re.compile(r"recall: could not write (claims queue|rejection ledger) \S+: No space left on device\n")


@pytest.fixture
def claims_on_disk(home: RecallHome, full_disk: Path) -> Path:
    """The home's claims folder, on the tiny disk."""
    folder = full_disk / "claims"
    folder.mkdir()
    state = home.root / "state" / "recall"
    state.mkdir(parents=True, exist_ok=True)
    (state / "claims").symlink_to(folder)
    return folder


def pad_queue(queue: Path, left: int) -> None:
    """Append another claim, sized so the queue's last page has ``left`` bytes free."""
    if not queue.exists():
        queue.write_bytes(HEADER)
    size = queue.stat().st_size

    def line(reporter: str) -> bytes:
        sides = [RecordRef(f"notes:{name}.md", f"PADDING:{name}.md", "a quote of padding", "0" * 64)
                 for name in ("padding-new", "padding-old")]
        claim = Claim("0000000000", *sides, datetime(2026, 1, 1, tzinfo=UTC), reporter)
        return orjson.dumps({"event": "reported", "claim": claim.to_json()}) + b"\n"

    shortest = len(line("x"))
    target = size + shortest + room_left_in_last_page(size + shortest) + PAGE - left
    with queue.open("ab") as out:
        out.write(line("x" * (1 + target - size - shortest)))
    assert room_left_in_last_page(queue.stat().st_size) == left


def test_a_report_the_disk_cuts_short_is_refused_and_the_queue_is_unchanged(home, claims_on_disk):
    queue = claims_on_disk / "queue.jsonl"
    pad_queue(queue, LEFT)
    (claims_on_disk / ".lock").touch()
    before = queue.read_bytes()
    fill(claims_on_disk.parent)
    run = report(home)
    assert (run.code, run.stdout) == (1, ""), run.stderr
    assert ONE_LINE.fullmatch(run.stderr), run.stderr
    assert queue.read_bytes() == before


def test_a_rejection_the_disk_refuses_leaves_no_ledger_and_the_claim_pending(home, claims_on_disk):
    claim = queued_id(report(home))
    queue = claims_on_disk / "queue.jsonl"
    before = queue.read_bytes()
    fill(claims_on_disk.parent)
    run = home.recall("review", "reject", claim, "--reviewer", "Ada", "--reason", "not so")
    assert run.code == 1
    assert ONE_LINE.fullmatch(run.stderr), run.stderr
    assert not (claims_on_disk / "rejections.jsonl").exists()
    assert queue.read_bytes() == before
    listed = home.recall("review")
    assert listed.code == 0 and claim in listed.stdout, listed.stderr


def test_an_accept_whose_decision_the_disk_cuts_short_gives_the_note_back(home, claims_on_disk):
    claim = queued_id(report(home))
    queue = claims_on_disk / "queue.jsonl"
    pad_queue(queue, LEFT)
    before = queue.read_bytes()
    note = home.root / "notes" / "restic.md"
    fill(claims_on_disk.parent)
    run = home.recall("review", "accept", claim, "--reviewer", "Ada")
    assert (run.code, run.stdout) == (1, ""), run.stderr
    assert ONE_LINE.fullmatch(run.stderr), run.stderr
    assert queue.read_bytes() == before
    assert note.read_text() == NEW
    listed = home.recall("review")
    assert listed.code == 0 and claim in listed.stdout, listed.stderr

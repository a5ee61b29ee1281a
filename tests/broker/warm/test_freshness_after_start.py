"""The first query after a resident broker starts never claims a freshness it did not check.

A folder larger than a cheap check sweeps whole is checked by its folder listings
and the notes edited last until the broker's adapter watches it (from its start)
and has checked every note once. An older note edited in place (its folder's
mtime unmoved) is invisible to that check: the answer must either find the edit
or say it is partial because the folder is not watched yet, and once the folder
is watched the edit is found with coverage complete.

A command run in process never lives to watch: the cheap check is its documented
guarantee, so its answers are complete and say the check was all there was.
"""

from __future__ import annotations

import json
import os
import time

from adapter_sdk.folder.watch import DEBOUNCE_MS
from adapter_sdk.residence import LONG_LIVED_ENV
from adapters.notes.freshness import SWEEP_BELOW

NOTES = SWEEP_BELOW + 300
LARGE = 8_000  # a sweep of these takes a resident adapter's first second or so
WORD = "zanzibarquux"
WATCHED_WITHIN_S = 30.0
# A watching adapter hears of an edit once the notifier hands it over (within its
# debounce); a search that starts sooner answers from what it has been told. That lag
# is the watched folder's at any time, not the broker's start, which is tested here.
HANDED_OVER_S = DEBOUNCE_MS / 1000


def _write_corpus(folder, notes: int = NOTES) -> None:
    for index in range(notes):
        path = folder / f"n{index:05d}.md"
        path.write_text(f"# Note {index}\n\nordinary words about topic {index}\n")
        stamp = 1_600_000_000 + index  # the oldest note is the first
        os.utime(path, (stamp, stamp))


def _edit_oldest_in_place(folder) -> None:
    before = folder.stat()
    with (folder / "n00003.md").open("w") as handle:  # truncated and rewritten, not replaced
        handle.write(f"# Note 3\n\n{WORD} appears now\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))


def _notes_report(answer: dict) -> dict:
    return next(r for r in answer["source_outcomes"] if r["source_id"] == "kb")


def test_an_old_note_edited_in_place_is_found_or_the_answer_says_the_folder_is_not_yet_watched(resident):
    folder = resident.root / "kb"
    _write_corpus(folder)
    built = resident.cold("refresh")
    assert built.returncode == 0, built.stdout + built.stderr
    resident.start()
    _edit_oldest_in_place(folder)
    time.sleep(HANDED_OVER_S)

    done = resident.recall("query", "--json", "--explain", "--scope", "source=kb", WORD)
    answer = json.loads(done.stdout)
    found = any(WORD in (r["primary"].get("excerpt") or "") for r in answer["results"])
    report = _notes_report(answer)
    if not found:
        assert answer["coverage"] == "degraded", "an unseen edit was answered with coverage complete"
        assert report["outcome"] == "partial"
        assert report["diagnostics"]["detail"].startswith("freshness: not yet watched")
        assert done.returncode == 3
    human = resident.recall("query", "--scope", "source=kb", WORD)
    if WORD not in human.stdout:  # the default output says why too, not only --explain
        assert "degraded coverage: kb (partial)\n  kb: freshness: not yet watched" in human.stdout, human.stdout

    deadline = time.monotonic() + WATCHED_WITHIN_S
    while True:  # once the folder is watched, the edit is found and nothing is guessed
        done = resident.recall("query", "--json", "--explain", "--scope", "source=kb", WORD)
        answer = json.loads(done.stdout)
        if _notes_report(answer)["diagnostics"]["freshness"]["mode"] == "watched":
            break
        assert time.monotonic() < deadline, "the resident adapter never watched the folder"
        time.sleep(0.5)
    assert answer["coverage"] == "complete"
    assert any(WORD in (r["primary"].get("excerpt") or "") for r in answer["results"])


def test_a_command_run_in_process_over_a_large_folder_answers_complete_on_its_cheap_check(resident):
    folder = resident.root / "kb"
    _write_corpus(folder)
    built = resident.cold("refresh")
    assert built.returncode == 0, built.stdout + built.stderr

    # the second shell was started from a long-lived broker's process tree: no matter
    for shell in ({}, {LONG_LIVED_ENV: "4242"}):
        done = resident.recall("query", "--no-daemon", "--json", "--explain", "--scope", "source=kb",
                               "topic 1234", env=shell)
        assert done.returncode == 0, done.stdout + done.stderr
        answer = json.loads(done.stdout)
        report = _notes_report(answer)
        assert answer["coverage"] == "complete" and report["outcome"] == "success", report
        assert report["diagnostics"]["freshness"]["mode"] == "checked"
        assert "detail" not in report["diagnostics"]
        assert any("n01234.md" in r["primary"]["locator"] for r in answer["results"])


def test_the_first_queries_after_a_broker_starts_wait_for_the_watch_and_answer_complete(resident):
    # the broker a query starts spawns its adapter, whose watch sweeps every note once;
    # that sweep ends well within the wait a search grants it, so the broker's first
    # answers come from a watched folder, not from a partial guess
    folder = resident.root / "kb"
    _write_corpus(folder, LARGE)
    built = resident.cold("refresh")
    assert built.returncode == 0, built.stdout + built.stderr
    for question in ("topic 1234", "topic 77", "topic 4321", "ordinary words"):
        done = resident.recall("query", "--json", "--explain", "--scope", "source=kb", question)
        answer = json.loads(done.stdout)
        report = _notes_report(answer)
        assert answer["coverage"] == "complete", report
        assert done.returncode == 0
    assert report["diagnostics"]["freshness"]["mode"] == "watched"

"""Index work outside any query deadline: a stopped first build resumes, and a bulk edit is
answered partial (saying how much is pending) until the catch-up completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from adapters.notes.adapter import INDEX_FILE
from adapters.notes.catchup import ELSEWHERE_PATIENCE_S, INDEX_LEASE, Catchup
from adapters.notes.freshness import partial_reason
from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store
from tests.support.adapter_process import deadline_in
from tests.support.lease_holder import lease_held_elsewhere, let_go

from .adapter_process import NotesProcess

NOTES = 4000  # four batches: a build can be stopped after one and before the last
POLL_S = 0.005


@contextmanager
def _watched(root: Path, work: Path, notes: int) -> Iterator[NotesProcess]:
    """The adapter over a corpus of ``notes``, once it watches the folder."""
    _corpus(root, notes)
    adapter = NotesProcess()
    try:
        adapter.initialize(str(root), str(work))
        give_up = time.monotonic() + 60
        while adapter.health()["diagnostics"]["freshness"]["mode"] != "watched":
            assert time.monotonic() < give_up, "the folder was never watched"
            time.sleep(0.1)
        yield adapter
    finally:
        adapter.close()


def _corpus(root: Path, count: int) -> None:
    for index in range(count):
        folder = root / f"area{index % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note-{index:05d}.md"
        path.write_text(f"# Note {index}\n\nheron number{index} sighting by the pond\n")
        os.utime(path, (1_704_067_200, 1_704_067_200))


def _killed_mid_build(root: Path, work: Path) -> dict[str, Any]:
    """Start the first build of ``root``'s index, kill its adapter once a batch is
    committed; the health it reported just before."""
    first = NotesProcess()
    try:
        first.initialize(str(root), str(work), {"watch": False})
        while True:
            health = first.health()
            if health["indexed_count"] > 0:
                break
            time.sleep(POLL_S)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=10)
    finally:
        first.close()
    return health


def test_killed_first_build_resumes_where_it_stopped(tmp_path: Path) -> None:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, NOTES)
    health = _killed_mid_build(root, work)
    committed = health["indexed_count"]
    assert committed < NOTES, "the build finished before it could be stopped"
    assert health["coverage"] == "partial"
    assert health["diagnostics"]["index_pending"] > 0

    second = NotesProcess()
    try:
        second.initialize(str(root), str(work), {"watch": False})
        refreshed = second.refresh()
        assert refreshed["indexed_count"] == NOTES
        assert refreshed["coverage"] == "complete"
        # what the killed build committed is kept, not read again
        assert refreshed["diagnostics"]["files_read"] <= NOTES - committed
        assert second.search("number3999 heron")["outcome"] == "success"
    finally:
        second.close()


def test_bulk_edit_is_answered_partial_then_complete(tmp_path: Path) -> None:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, NOTES)
    adapter = NotesProcess()
    try:
        adapter.initialize(str(root), str(work), {"watch": False})
        assert adapter.refresh()["coverage"] == "complete"
        for path in sorted(root.rglob("*.md")):  # an editor's save: write aside, rename over
            aside = path.with_suffix(".tmp")
            aside.write_text(path.read_text() + "\nkingfisher seen too\n")
            os.replace(aside, path)
        first = adapter.search("kingfisher", deadline=deadline_in(2))
        assert first["outcome"] == "partial"
        assert first["reason"] == "index_catching_up"
        assert "waiting to be indexed" in first["diagnostics"]["detail"]
        assert first["diagnostics"]["freshness"]["pending"] > 0
        while True:
            result = adapter.search("kingfisher", deadline=deadline_in(2))
            if result["outcome"] == "success":
                break
            assert result["reason"] == "index_catching_up"
            time.sleep(0.05)
        assert result["diagnostics"]["freshness"]["pending"] == 0
        assert adapter.health()["coverage"] == "complete"
        assert len(adapter.search("kingfisher", limit=NOTES)["candidates"]) == NOTES
    finally:
        adapter.close()


@contextmanager
def _indexed_young(root: Path, work: Path, notes: int) -> Iterator[NotesProcess]:
    """An unwatched adapter over ``notes`` indexed while their mtimes are too young to
    trust: whole seconds (a file system with a coarse clock), a minute ahead."""
    _corpus(root, notes)
    young = (time.time_ns() // 1_000_000_000 + 60) * 1_000_000_000
    for path in root.rglob("*.md"):
        os.utime(path, ns=(young, young))
    adapter = NotesProcess()
    try:
        adapter.initialize(str(root), str(work), {"watch": False})
        assert adapter.refresh()["coverage"] == "complete"
        yield adapter
    finally:
        adapter.close()


def test_notes_written_just_before_the_build_do_not_hide_the_next_edit(tmp_path: Path) -> None:
    """A folder written moments before it was indexed (a clone, a restore) has records too
    young to trust; the next search reads them all again. The one note that did change
    is read first, and the search waits for it: those re-checks are not a backlog."""
    root, count = tmp_path / "notes", 400  # more re-checks than a search would wait for as changes
    with _indexed_young(root, tmp_path / "work", count) as adapter:
        saved = root / "area2" / "note-00202.md"  # an editor's save: write aside, rename over
        aside = saved.with_suffix(".tmp")
        aside.write_text(saved.read_text() + "\nosprey over the reeds\n")
        os.replace(aside, saved)
        result = adapter.search("osprey reeds", deadline=deadline_in(2))
        assert [c["source_record_id"] for c in result["candidates"]] == ["area2/note-00202.md"]
        assert result["outcome"] == "success"
        assert result["diagnostics"]["freshness"]["pending"] == 0
        assert result["diagnostics"]["files_read"] >= count  # every young record was read again


def test_a_search_cut_short_by_re_checks_says_so(tmp_path: Path) -> None:
    """With nothing changed, a search that runs out of time while young records are read
    again answers partial and says what is left: re-reads, not notes to index."""
    with _indexed_young(tmp_path / "notes", tmp_path / "work", NOTES) as adapter:
        cut_short = None
        for _ in range(20):  # the first may still be listing the folder
            result = adapter.search("heron sighting", deadline=deadline_in(0.26))  # next to no wait
            detail = result["diagnostics"].get("detail", "")
            # the first may also come before the catch-up has stat'ed the queued notes
            if result["outcome"] == "partial" and "read again" in detail:
                cut_short = detail
                break
        assert cut_short is not None, "no search was cut short by the re-checks"
        assert "recently written notes are being read again" in cut_short, cut_short
        assert "waiting to be indexed" not in cut_short


def test_a_watched_folder_applies_an_edit_without_checking_at_search_time(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    with _watched(root, tmp_path / "work", notes=50) as adapter:
        give_up = time.monotonic() + 60
        with (root / "area1" / "note-00005.md").open("a") as handle:  # in place: no folder mtime moves
            handle.write("\navocet on the mudflat\n")
        while True:
            result = adapter.search("avocet mudflat")
            assert result["diagnostics"]["freshness"]["mode"] == "watched"
            if result["candidates"]:
                break
            assert time.monotonic() < give_up, "the watcher never applied the edit"
            time.sleep(0.02)
        assert result["candidates"][0]["source_record_id"] == "area1/note-00005.md"
        assert result["outcome"] == "success"


def _found_watched(adapter: NotesProcess, query: str) -> dict[str, Any]:
    """The first answer to ``query`` that has candidates, every answer meanwhile given
    from a watched folder with no check at search time."""
    give_up = time.monotonic() + 60
    while True:
        result = adapter.search(query)
        if result["candidates"] and result["diagnostics"]["freshness"]["mode"] == "watched":
            return result
        assert time.monotonic() < give_up, f"{query!r} was never found in the watched folder"
        time.sleep(0.02)


def test_a_folder_made_after_the_watch_began_is_swept_and_then_watched(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    with _watched(root, tmp_path / "work", notes=20) as adapter:
        (root / "later" / "deeper").mkdir(parents=True)
        note = root / "later" / "deeper" / "curlew.md"
        note.write_text("# Curlew\n\ncurlew over the saltmarsh\n")
        found = _found_watched(adapter, "curlew saltmarsh")
        assert found["candidates"][0]["source_record_id"] == "later/deeper/curlew.md"
        with note.open("a") as handle:  # in place: seen only by a watch on the new folder
            handle.write("\nwhimbrel at dusk\n")
        found = _found_watched(adapter, "whimbrel dusk")
        assert found["candidates"][0]["source_record_id"] == "later/deeper/curlew.md"


def _built(tmp_path: Path, count: int) -> tuple[Catchup, Path]:
    root = tmp_path / "notes"
    _corpus(root, count)
    store = Store(str(tmp_path / "index.sqlite3"), str(root), NotesSettings().digest)
    store.open()
    catchup = Catchup(store, str(root), NotesSettings())
    catchup.sweep()
    assert catchup.wait(60).idle
    return catchup, root


def test_a_sweep_that_only_verifies_a_complete_index_is_not_waited_for(tmp_path: Path) -> None:
    catchup, root = _built(tmp_path, NOTES)
    try:
        catchup.sweep(verify=True)  # the watcher's first sweep: no change is known
        assert catchup.progress().idle  # the index counts as up to date meanwhile
        started = time.monotonic()
        assert catchup.wait(30, at_most=256).idle
        assert time.monotonic() - started < 0.5, "a search waited for a sweep that found nothing"
        catchup.sweep()  # a sweep asked for because something changed is waited for
        assert not catchup.progress().idle
        assert catchup.wait(60).idle
    finally:
        catchup.stop()


def test_queued_re_checks_are_counted_as_re_reads_not_as_notes_to_index(tmp_path: Path) -> None:
    """Notes a search's check queues only to read again (their stat was recorded too soon
    after a write) are said to be read again, whether they wait in the queue, run, or wait
    for another process; a note queued both ways is a change."""
    catchup, root = _built(tmp_path, 20)
    try:
        with lease_held_elsewhere(tmp_path, INDEX_LEASE) as holder:  # the work stays queued
            catchup.enqueue(["area1/note-00001.md"], rechecks=["area2/note-00002.md", "area3/note-00003.md"])
            progress = catchup.progress()
            assert (progress.pending, progress.rechecks) == (3, 2)
            reason = partial_reason(progress, 20, building=False, failed=0, stale=set())
            assert reason is not None and "1 notes are waiting to be indexed, and 2 recently" in reason[1]
            catchup.enqueue(["area2/note-00002.md"])  # it changed after all
            progress = catchup.progress()
            assert (progress.pending, progress.rechecks) == (3, 1)
            let_go(holder)
        assert catchup.wait(60).idle
    finally:
        catchup.stop()


def test_a_verifying_sweep_that_finds_changes_is_reported_pending(tmp_path: Path) -> None:
    catchup, root = _built(tmp_path, NOTES)
    try:
        for path in sorted(root.rglob("*.md"))[:600]:
            path.write_text(path.read_text() + "\nkingfisher\n")
        seen_pending = False
        catchup.sweep(verify=True)
        give_up = time.monotonic() + 60
        while catchup.runs_done < 2:  # the build was run one
            progress = catchup.progress()
            seen_pending |= progress.pending > 0 and not progress.idle
            assert time.monotonic() < give_up
            time.sleep(POLL_S)
        assert seen_pending, "the changed notes the sweep found were never reported as pending"
    finally:
        catchup.stop()


def test_an_edit_made_while_another_process_writes_the_index_waits_its_turn(tmp_path: Path) -> None:
    """Another process (a 'recall refresh' beside a resident broker) holds the index for
    writing longer than a statement waits (5 s): the edit the watch saw stays pending,
    searches answer partial meanwhile, and it is indexed once the other lets go, never
    dropped as an error (a watched folder is not checked again at search time)."""
    root, work = tmp_path / "notes", tmp_path / "work"
    with _watched(root, work, notes=20) as adapter:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_THE_INDEX, str(work / INDEX_FILE), str(HOLD_S)],
            stdout=subprocess.PIPE, text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        held_at = time.monotonic()
        with (root / "area1" / "note-00001.md").open("a") as handle:  # in place: no folder mtime moves
            handle.write("\nkingfisher seen too\n")
        for _ in range(100):  # until the watch has seen it
            if adapter.search("kingfisher", deadline=deadline_in(1)).get("reason") == "index_catching_up":
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the edit was never reported pending")
        time.sleep(max(0.0, held_at + 6.0 - time.monotonic()))  # past the statement's wait
        meanwhile = adapter.search("kingfisher", deadline=deadline_in(1))
        assert holder.poll() is None, "the other process let go too early for this test"
        assert meanwhile["reason"] == "index_catching_up"
        assert "last_build_error" not in meanwhile["diagnostics"]
        assert holder.wait(timeout=30) == 0
        for _ in range(200):
            result = adapter.search("kingfisher", deadline=deadline_in(2))
            if result["outcome"] == "success":
                break
            time.sleep(0.05)
        assert [c["source_record_id"] for c in result["candidates"]] == ["area1/note-00001.md"]


HOLD_S = 7.5
# Take the index's write lock, say so, keep it for argv[2] seconds, let go.
HOLD_THE_INDEX = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


def test_a_folder_another_process_is_indexing_is_not_read_twice(tmp_path: Path) -> None:
    """Two commands building one index at once (a 'recall refresh' beside a resident
    broker): while the other holds the index work, this catch-up reads no note; once
    the other has been at it a while, a search stops waiting for it; the work is done
    once the other lets go."""
    root = tmp_path / "notes"
    _corpus(root, 400)
    store = Store(str(tmp_path / "work" / INDEX_FILE), str(root), NotesSettings().digest)
    (tmp_path / "work").mkdir()
    store.open()
    catchup = Catchup(store, str(root), NotesSettings())
    try:
        with lease_held_elsewhere(tmp_path / "work", INDEX_LEASE) as holder:
            catchup.sweep()
            time.sleep(ELSEWHERE_PATIENCE_S + 0.2)
            waited_from = time.monotonic()
            progress = catchup.wait(30, at_most=256)  # as a search waits
            assert time.monotonic() - waited_from < 0.5, "a search waited for another process's long build"
            assert progress.elsewhere and not progress.idle
            assert store.conn().execute("SELECT count(*) FROM notes").fetchone()[0] == 0
            let_go(holder)
        assert catchup.wait(60).idle
        assert store.conn().execute("SELECT count(*) FROM notes").fetchone()[0] == 400
        assert not catchup.progress().elsewhere
    finally:
        catchup.stop()


def test_a_search_waits_for_index_work_another_process_has_only_just_taken(tmp_path: Path) -> None:
    """Three commands started together over a small folder: the one that loses the index
    work must not answer partial at once, while the work it lost is over in a moment.
    Its search waits, within its budget, and is answered complete."""
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, 40)
    work.mkdir()
    store = Store(str(work / INDEX_FILE), str(root), NotesSettings().digest)
    store.open()
    catchup = Catchup(store, str(root), NotesSettings())
    try:
        with lease_held_elsewhere(work, INDEX_LEASE) as holder:
            catchup.sweep()
            releaser = threading.Timer(0.3, let_go, args=(holder,))
            releaser.start()
            waited_from = time.monotonic()
            progress = catchup.wait(5, at_most=256)  # as a search waits
            waited = time.monotonic() - waited_from
            releaser.join()
        assert progress.idle, f"the search gave up on short work elsewhere: {progress}"
        assert 0.25 <= waited < ELSEWHERE_PATIENCE_S + 0.5
        assert store.conn().execute("SELECT count(*) FROM notes").fetchone()[0] == 40
    finally:
        catchup.stop()


def test_a_search_while_another_process_builds_the_index_says_so(tmp_path: Path) -> None:
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, 50)
    adapter = NotesProcess()
    try:
        with lease_held_elsewhere(work, INDEX_LEASE) as holder:
            adapter.initialize(str(root), str(work), {"watch": False})
            started = time.monotonic()
            meanwhile = adapter.search("heron number7", deadline=deadline_in(2))
            assert time.monotonic() - started < 2.0, "the search passed its deadline"
            assert meanwhile["outcome"] == "partial"
            assert meanwhile["reason"] == "index_building"
            assert "another process is indexing this folder" in meanwhile["diagnostics"]["detail"]
            health = adapter.health()
            assert health["coverage"] == "partial"
            assert "another process is indexing this folder" in health["diagnostics"]["detail"]
            let_go(holder)
        refreshed = adapter.refresh()
        assert (refreshed["coverage"], refreshed["indexed_count"]) == ("complete", 50)
        found = adapter.search("heron number7", deadline=deadline_in(2))
        assert found["outcome"] == "success"
        assert [c["source_record_id"] for c in found["candidates"]][:1] == ["area3/note-00007.md"]
    finally:
        adapter.close()


def test_a_search_during_a_first_build_counts_the_notes_it_searched(tmp_path: Path) -> None:
    """A first build stopped part-way, and another process holding the index work so
    nobody finishes it: a search answers from the committed notes and says how many."""
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, NOTES)
    _killed_mid_build(root, work)
    second = NotesProcess()
    try:
        with lease_held_elsewhere(work, INDEX_LEASE):
            second.initialize(str(root), str(work), {"watch": False})
            committed = second.health()["indexed_count"]
            assert 0 < committed < NOTES, "the build was not stopped part-way"
            result = second.search("heron sighting", deadline=deadline_in(2))
            assert result["reason"] == "index_building"
            assert result["diagnostics"]["indexed_count"] == committed
            assert f"answered from the {committed} notes indexed so far" in result["diagnostics"]["detail"]
            assert result["candidates"], "the committed notes were not searched"
    finally:
        second.close()


def test_notes_rewritten_in_place_wholesale_are_swept_for_not_checked_in_part(tmp_path: Path) -> None:
    """An unwatched folder's cheap check stats the 256 most recent notes; a script that
    appended to every note changed all of them, and the rest likely too. The search must
    not answer 'success' from an index stale for thousands of notes: it sweeps, and
    answers partial, saying how many wait. A few notes edited in place are just read."""
    root, work = tmp_path / "notes", tmp_path / "work"
    _corpus(root, NOTES)
    notes = sorted(root.rglob("*.md"))
    for path in notes[:3]:  # the notes edited last, among those the check stats
        os.utime(path, (1_704_070_000, 1_704_070_000))
    adapter = NotesProcess()
    try:
        adapter.initialize(str(root), str(work), {"watch": False})
        assert adapter.refresh()["coverage"] == "complete"
        for path in notes[:3]:  # in place: no folder's mtime moves
            with path.open("a") as handle:
                handle.write("\nkingfisher seen too\n")
        few = adapter.search("kingfisher", deadline=deadline_in(5))
        assert few["outcome"] == "success"
        assert few["diagnostics"]["freshness"]["mode"] == "checked"
        assert len(few["candidates"]) == 3
        for path in notes[3:]:
            with path.open("a") as handle:
                handle.write("\nkingfisher seen too\n")
        wholesale = adapter.search("kingfisher", deadline=deadline_in(2))
        assert wholesale["outcome"] == "partial"
        assert wholesale["reason"] == "index_catching_up"
        assert wholesale["diagnostics"]["freshness"]["mode"] == "swept"
        assert wholesale["diagnostics"]["freshness"]["pending"] > NOTES // 2
    finally:
        adapter.close()


def test_a_run_failing_unexpectedly_is_said_and_later_work_still_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in one run (a name the index could not hold did this) must not end the
    catch-up thread, or the index would never be built in that process."""
    import adapters.notes.sync

    root = tmp_path / "notes"
    _corpus(root, 20)
    store = Store(str(tmp_path / INDEX_FILE), str(root), NotesSettings().digest)
    store.open()
    real_sync, runs = adapters.notes.sync.sync, []

    def first_run_fails(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        if len(runs) == 1:
            raise UnicodeEncodeError("utf-8", "caf\udce9.md", 3, 4, "surrogates not allowed")
        return real_sync(*args, **kwargs)

    monkeypatch.setattr(adapters.notes.sync, "sync", first_run_fails)
    catchup = Catchup(store, str(root), NotesSettings())
    try:
        catchup.sweep()
        assert catchup.wait(60).idle
        assert catchup.progress().error == (
            "index update failed: UnicodeEncodeError: 'utf-8' codec can't encode character"
            " '\\udce9' in position 3: surrogates not allowed"
        )
        catchup.sweep()
        assert catchup.wait(60).idle and catchup.progress().error is None
        assert store.meta("build_complete") == "1"
    finally:
        catchup.stop()


def test_a_failing_upkeep_after_a_run_is_said_and_later_work_still_done(tmp_path: Path) -> None:
    """The upkeep after each run (the ranker's) failing must not end the catch-up thread,
    or no edit would be indexed again in that process."""
    import sqlite3

    root = tmp_path / "notes"
    _corpus(root, 20)
    store = Store(str(tmp_path / INDEX_FILE), str(root), NotesSettings().digest)
    store.open()

    def upkeep() -> None:
        raise sqlite3.OperationalError("database is locked")

    catchup = Catchup(store, str(root), NotesSettings(), after_run=upkeep)
    try:
        catchup.sweep()
        assert catchup.wait(60).idle
        assert catchup.progress().error == "index upkeep failed: database is locked"
        edited = root / "area1" / "note-00001.md"
        edited.write_text(edited.read_text() + "\nkingfisher\n")
        catchup.enqueue(["area1/note-00001.md"])
        give_up = time.monotonic() + 30
        while catchup.runs_done < 2:
            assert time.monotonic() < give_up, "the catch-up thread stopped after the failed upkeep"
            time.sleep(POLL_S)
        body = store.conn().execute(
            "SELECT t.body FROM chunk_text t JOIN chunks c ON c.id = t.rowid JOIN notes n"
            " ON n.id = c.note_id WHERE n.path = 'area1/note-00001.md'"
        ).fetchall()
        assert any("kingfisher" in row[0] for row in body)
    finally:
        catchup.stop()

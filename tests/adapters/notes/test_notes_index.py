"""The index and its incremental sync, driven in-process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from adapter_sdk.folder.scan import settled
from adapters.notes.freshness import SWEEP_BELOW, quick_check
from adapters.notes.settings import NotesSettings
from adapters.notes.store import BUILD_CACHE_KIB, IndexWriteError, Store
from adapters.notes.sync import sync
from tests.support.together import run_together

from .conftest import NOTES, write_note


@pytest.fixture
def store(tmp_path: Path) -> tuple[Store, Path]:
    root = tmp_path / "notes"
    for rel, text in NOTES.items():
        write_note(root, rel, text)
    index = Store(str(tmp_path / "index.sqlite3"), str(root), NotesSettings().digest)
    index.open()
    sync(index, str(root), NotesSettings())
    return index, root


def test_unchanged_folder_is_not_read(store: tuple[Store, Path]) -> None:
    index, root = store
    report = sync(index, str(root), NotesSettings())
    assert (report.files_read, report.files_reindexed, report.changed) == (0, 0, False)


def test_touched_but_identical_note_is_hashed_not_reindexed(store: tuple[Store, Path]) -> None:
    index, root = store
    path = root / "ideas.txt"
    write_note(root, "ideas.txt", path.read_text(), mtime=1_800_000_000)
    report = sync(index, str(root), NotesSettings())
    assert (report.files_read, report.files_reindexed) == (1, 0)


def test_note_edited_within_the_same_mtime_is_still_caught(store: tuple[Store, Path]) -> None:
    index, root = store
    # written this second, on a file system that keeps whole seconds
    written = time.time_ns() // 1_000_000_000 * 1_000_000_000
    path = write_note(root, "fresh.md", "# One\n", mtime=None)
    os.utime(path, ns=(written, written))
    sync(index, str(root), NotesSettings())
    path.write_text("# Two\n")  # same size, within the same second: the mtime cannot move
    os.utime(path, ns=(written, written))
    sync(index, str(root), NotesSettings())
    titles = [r[0] for r in index.conn().execute("SELECT title FROM notes WHERE path = 'fresh.md'")]
    assert titles == ["Two"]


@pytest.mark.parametrize(
    ("mtime_ns", "listed_after_ns", "trusted"),
    [
        (1_704_067_200_123_456_789, 50_000_000, False),  # nanosecond clock, within its tick margin
        (1_704_067_200_123_456_789, 150_000_000, True),
        (1_704_067_200_000_000_000, 1_500_000_000, False),  # whole seconds: a coarse clock
        (1_704_067_200_000_000_000, 2_100_000_000, True),
        (1_704_067_200_123_456_789, -5_000_000_000, False),  # a modification time ahead of the clock
    ],
)
def test_a_record_is_trusted_only_once_its_files_clock_has_moved_on(
    mtime_ns: int, listed_after_ns: int, trusted: bool
) -> None:
    assert settled(mtime_ns, mtime_ns + listed_after_ns) is trusted


def test_generation_advances_only_on_change(store: tuple[Store, Path]) -> None:
    index, root = store
    before = index.meta("generation")
    sync(index, str(root), NotesSettings())
    assert index.meta("generation") == before
    write_note(root, "new.md", "# New\n")
    sync(index, str(root), NotesSettings())
    assert index.meta("generation") != before


def test_watermark_depends_on_content_not_on_when_it_was_built(tmp_path: Path, store: tuple[Store, Path]) -> None:
    index, root = store
    other = Store(str(tmp_path / "other.sqlite3"), str(root), NotesSettings().digest)
    other.open()
    sync(other, str(root), NotesSettings())
    assert other.meta("watermark") == index.meta("watermark")


def test_index_for_other_settings_is_rebuilt(tmp_path: Path, store: tuple[Store, Path]) -> None:
    index, root = store
    again = Store(index.path, str(root), NotesSettings(max_file_bytes=10).digest)
    again.open()
    assert again.rebuilt_reason == "index settings changed; rebuilt"
    assert again.meta("generation") == ""


def test_unreadable_index_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    path.write_bytes(b"garbage" * 1000)
    index = Store(str(path), str(tmp_path), NotesSettings().digest)
    index.open()
    assert index.rebuilt_reason is not None and "rebuilt" in index.rebuilt_reason
    assert index.conn().execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_a_full_disk_is_named_and_the_previous_index_stays_usable(store: tuple[Store, Path]) -> None:
    index, root = store
    before = index.meta("generation")
    chunks = index.conn().execute("SELECT count(*) FROM chunks").fetchone()[0]
    for number in range(50):
        write_note(root, f"bulk/n{number}.md", f"# Bulk {number}\n\n" + "filler text " * 400)
    # SQLite's own cap on the file's size answers SQLITE_FULL exactly as a full disk does
    pages = index.conn().execute("PRAGMA page_count").fetchone()[0]
    index.conn().execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(IndexWriteError) as refused:
        sync(index, str(root), NotesSettings())
    assert str(refused.value) == f"disk full at {index.path}"
    assert index.meta("generation") == before
    assert index.conn().execute("SELECT count(*) FROM chunks").fetchone()[0] == chunks
    hits = index.conn().execute("SELECT count(*) FROM chunk_text WHERE chunk_text MATCH 'restic'")
    assert hits.fetchone()[0] > 0


def _unindexed(tmp_path: Path, notes: int) -> tuple[Store, Path]:
    """A folder of ``notes`` small notes and its index, opened and empty."""
    root = tmp_path / "many"
    for number in range(notes):
        write_note(root, f"n{number:02d}.md", f"# N {number}\n\nplover {number}\n")
    index = Store(str(tmp_path / "many.sqlite3"), str(root), NotesSettings().digest)
    index.open()
    return index, root


def test_stopped_sync_keeps_its_committed_batches_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, root = _unindexed(tmp_path, 25)
    monkeypatch.setattr("adapters.notes.sync.BATCH_FILES", 10)
    batches: list[int] = []
    stopped = sync(index, str(root), NotesSettings(), should_stop=lambda: len(batches) >= 3,
                   progress=lambda report: batches.append(report.files_pending))  # before and after each batch
    assert (stopped.complete, stopped.files_pending) == (False, 5)
    assert index.conn().execute("SELECT count(*) FROM notes").fetchone()[0] == 20
    assert index.meta("build_complete") == ""
    resumed = sync(index, str(root), NotesSettings())
    assert (resumed.complete, resumed.files_read) == (True, 5)
    assert index.meta("build_complete") == "1"
    assert index.meta("note_count") == "25"


def test_a_first_build_writes_through_a_large_page_cache_and_a_bulk_edit_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache speeds a first build; a resident adapter's bulk edits keep its memory."""
    index, root = _unindexed(tmp_path, 6)
    default = index.conn().execute("PRAGMA cache_size").fetchone()[0]
    monkeypatch.setattr("adapters.notes.sync.BULK_AFTER", 5)
    monkeypatch.setattr("adapters.notes.sync.BATCH_FILES", 2)

    def caches_of_a_run() -> list[int]:
        caches: list[int] = []
        report = sync(index, str(root), NotesSettings(), progress=lambda _: caches.append(
            index.conn().execute("PRAGMA cache_size").fetchone()[0]))
        assert report.complete and report.files_read == 6
        return caches[1:]  # progress is told once before the run, then after each batch

    assert caches_of_a_run() == [-BUILD_CACHE_KIB] * 3
    assert index.conn().execute("PRAGMA cache_size").fetchone()[0] == default != -BUILD_CACHE_KIB
    for note in root.iterdir():
        note.write_text(note.read_text() + "\nbulk edit\n")
    assert caches_of_a_run() == [default] * 3


def test_a_name_that_is_not_utf8_is_declined_once_whichever_way_it_is_found(
    store: tuple[Store, Path]
) -> None:
    index, root = store
    name = os.fsdecode(b"caf\xe9.md")
    (root / name).write_bytes(b"# Cafe\n\nespresso\n")
    named = sync(index, str(root), NotesSettings(), only=[name])  # as the watch hands it over
    assert named.complete and named.changed
    declined = "SELECT path, reason FROM declined"
    assert index.conn().execute(declined).fetchall() == [("caf\\xe9.md", "path is not UTF-8, which a locator cannot name")]
    swept = sync(index, str(root), NotesSettings())
    assert (swept.complete, swept.changed, swept.files_removed) == (True, False, 0)
    again = sync(index, str(root), NotesSettings(), only=[name])
    assert (again.complete, again.changed) == (True, False)
    os.utime(root)  # a cheap check lists the folder again: nothing there is news
    check = quick_check(index.conn(), str(root), NotesSettings(), note_count=SWEEP_BELOW + 1)
    assert (check.sweep, check.paths, list(check.dirs)) == (False, [], [""])
    (root / name).unlink()
    gone = sync(index, str(root), NotesSettings())
    assert gone.changed and index.conn().execute(declined).fetchall() == []


def _counted(index: Store) -> tuple[str, str]:
    conn = index.conn()
    return (str(conn.execute("SELECT count(*) FROM notes").fetchone()[0]),
            str(conn.execute("SELECT count(*) FROM chunks").fetchone()[0]))


def test_note_and_chunk_counts_follow_every_change_without_recounting(store: tuple[Store, Path]) -> None:
    index, root = store
    assert (index.meta("note_count"), index.meta("chunk_count")) == _counted(index)
    write_note(root, "three.md", "# A\n\none\n\n# B\n\ntwo\n\n# C\n\nthree\n")
    sync(index, str(root), NotesSettings())
    write_note(root, "three.md", "# A only\n\none\n", mtime=1_800_000_000)  # three chunks become one
    (root / "ideas.txt").unlink()
    write_note(root, "big.md", "# Big\n\n" + "x " * 5000)
    sync(index, str(root), NotesSettings(max_file_bytes=4096))
    assert (index.meta("note_count"), index.meta("chunk_count")) == _counted(index)


def test_an_index_that_kept_no_counts_is_counted_once(store: tuple[Store, Path]) -> None:
    index, root = store
    index.conn().execute("DELETE FROM meta WHERE key IN ('note_rows', 'chunk_rows')")
    write_note(root, "new.md", "# New\n\nbody\n")
    sync(index, str(root), NotesSettings())
    assert (index.meta("note_count"), index.meta("chunk_count")) == _counted(index)
    assert (index.meta("note_rows"), index.meta("chunk_rows")) == _counted(index)


def test_an_index_that_kept_no_counts_gains_them_when_opened(store: tuple[Store, Path]) -> None:
    index, root = store
    index.conn().execute("DELETE FROM meta WHERE key IN ('note_rows', 'chunk_rows')")
    reopened = Store(index.path, str(root), NotesSettings().digest)
    reopened.open()  # so no search counts 550,000 chunks to learn how many there are
    assert (reopened.meta("note_rows"), reopened.meta("chunk_rows")) == _counted(index)


SECTIONS = [f"## Part {n}\n\nplover{n} heron egret {n}\n" for n in range(6)]


def _chunk_rows(index: Store) -> list[tuple[object, ...]]:
    """Every chunk as a search and a locator see it: its note, place and indexed text."""
    return sorted(index.conn().execute(
        "SELECT n.path, c.ordinal, c.start_line, c.end_line, c.heading, c.heading_path, c.preview,"
        " t.title, t.body FROM chunks c JOIN notes n ON n.id = c.note_id JOIN chunk_text t ON t.rowid = c.id"
    ))


def _matches(index: Store, term: str) -> list[tuple[str, int]]:
    return sorted(index.conn().execute(
        "SELECT n.path, c.start_line FROM chunk_text JOIN chunks c ON c.id = chunk_text.rowid"
        " JOIN notes n ON n.id = c.note_id WHERE chunk_text MATCH ?", (term,),
    ))


def test_an_edit_reindexes_only_the_chunks_whose_text_changed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write_note(root, "long.md", "# Long\n\n" + "\n".join(SECTIONS))
    write_note(root, "other.md", "# Other\n\nheron\n")
    index = Store(str(tmp_path / "index.sqlite3"), str(root), NotesSettings().digest)
    index.open()
    sync(index, str(root), NotesSettings())
    ids_before = dict(index.conn().execute("SELECT t.body, c.id FROM chunks c JOIN chunk_text t ON t.rowid = c.id"))
    journaled_before = index.conn().execute("SELECT count(*) FROM rank_journal").fetchone()[0]

    # two lines above every section, part 2 rewritten, part 3 gone
    edited = SECTIONS[:2] + ["## Part 2\n\ncormorant rewritten\n"] + SECTIONS[4:]
    write_note(root, "long.md", "# Long\n\nintro\nmore intro\n\n" + "\n".join(edited), mtime=1_800_000_000)
    report = sync(index, str(root), NotesSettings())

    assert report.files_reindexed == 1
    ids_after = dict(index.conn().execute("SELECT t.body, c.id FROM chunks c JOIN chunk_text t ON t.rowid = c.id"))
    unchanged = [body for body in ids_after if body in ids_before]
    assert len(unchanged) >= 4  # parts 0, 1, 4 and 5, and the other note
    assert all(ids_after[body] == ids_before[body] for body in unchanged)
    replaced = len(ids_after) - len(unchanged) + len(ids_before) - len(unchanged)
    journaled = index.conn().execute("SELECT count(*) FROM rank_journal").fetchone()[0] - journaled_before
    assert journaled == replaced  # kept chunks are nothing new for the ranker

    # what was kept moved with its text: the index is the one a fresh build makes
    fresh = Store(str(tmp_path / "fresh.sqlite3"), str(root), NotesSettings().digest)
    fresh.open()
    sync(fresh, str(root), NotesSettings())
    assert _chunk_rows(index) == _chunk_rows(fresh)
    for term in ("plover5", "plover3", "cormorant", "heron", "intro"):
        assert _matches(index, term) == _matches(fresh, term), term
    assert _matches(index, "plover3") == []
    index.conn().execute("INSERT INTO chunk_text(chunk_text) VALUES ('integrity-check')")
    assert (index.meta("note_count"), index.meta("chunk_count")) == _counted(index)


def test_a_full_sync_reindexes_every_chunk(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write_note(root, "long.md", "# Long\n\n" + "\n".join(SECTIONS))
    index = Store(str(tmp_path / "index.sqlite3"), str(root), NotesSettings().digest)
    index.open()
    sync(index, str(root), NotesSettings())
    before = {row[0] for row in index.conn().execute("SELECT id FROM chunks")}
    sync(index, str(root), NotesSettings(), full=True)
    after = {row[0] for row in index.conn().execute("SELECT id FROM chunks")}
    assert before and not before & after


def test_processes_opening_one_new_index_at_once_all_find_it_whole(tmp_path: Path) -> None:
    """Commands started together each run an adapter on the same index: none may read a
    schema another is still creating, nor delete one another has just created."""
    for attempt in range(12):
        path = tmp_path / f"shared-{attempt}.sqlite3"
        done = run_together(OPEN_AND_COUNT, str(path), str(tmp_path), copies=4)
        assert [(run.code, run.stdout) for run in done] == [(0, "0 0\n")] * 4, done
        assert sum("no index yet" in run.stderr for run in done) == 1, done


# Open the index, read every table, print two counts and why the index was made.
OPEN_AND_COUNT = """
import sys
from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store
index = Store(sys.argv[1], sys.argv[2], NotesSettings().digest)
index.open()
conn = index.conn()
for table in ("meta", "notes", "chunks", "chunk_text", "identifiers", "failures", "declined", "dirs"):
    conn.execute(f"SELECT count(*) FROM {table}").fetchone()
print(*(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("notes", "declined")))
print(index.rebuilt_reason, file=sys.stderr)
"""


def test_two_processes_building_one_index_at_once_both_finish_with_the_same_index(tmp_path: Path) -> None:
    """Two commands at once each index the folder: notes one commits after the other listed
    its work are replaced, not inserted twice, and the index ends as one build makes it."""
    root = tmp_path / "notes"
    for number in range(300):
        write_note(root, f"area{number % 7}/note-{number}.md", f"# Note {number}\n\nRestore drill {number}.\n")
    alone = Store(str(tmp_path / "alone.sqlite3"), str(root), NotesSettings().digest)
    alone.open()
    sync(alone, str(root), NotesSettings())
    for attempt in range(6):
        path = tmp_path / f"shared-{attempt}.sqlite3"
        done = run_together(OPEN_AND_SYNC, str(path), str(root), copies=2, timeout=120)
        assert [run.code for run in done] == [0, 0], done
        shared = Store(str(path), str(root), NotesSettings().digest)
        shared.open()
        for key in ("note_rows", "chunk_rows", "content_digest", "build_complete"):
            assert shared.meta(key) == alone.meta(key), key
        assert shared.conn().execute("SELECT count(DISTINCT path), count(*) FROM notes").fetchone() == (300, 300)


# Open the index and bring it up to date with the folder.
OPEN_AND_SYNC = """
import sys
from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store
from adapters.notes.sync import sync
index = Store(sys.argv[1], sys.argv[2], NotesSettings().digest)
index.open()
report = sync(index, sys.argv[2], NotesSettings(), parallel=False)
assert report.complete, report
"""


def test_closing_while_a_batch_is_being_written_does_not_wait_for_it(store: tuple[Store, Path]) -> None:
    """A command ending while its adapter's first build writes a batch: closing the index
    (which folds the WAL back) must not wait for that write (it waited 1.4 s for a batch
    of 1,000 notes, up to the 5 s a statement waits)."""
    import threading

    index, _ = store
    writing, finish = threading.Event(), threading.Event()

    def batch() -> None:
        with index.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('test_batch', '1')")
            writing.set()
            finish.wait(10)

    writer = threading.Thread(target=batch)
    writer.start()
    try:
        assert writing.wait(5)
        started = time.monotonic()
        index.close()
        assert time.monotonic() - started < 1.0, "closing waited for the batch being written"
    finally:
        finish.set()
        writer.join()

"""Bring the index in line with the folder, reading only what changed, in batches.

Every file is stat'ed; a file whose size and mtime match what was recorded is
trusted without being opened, unless it was modified so close to the moment
it was recorded that a later edit could share its mtime (then it is hashed
again). A file that is read is hashed; only a changed hash re-parses and
re-indexes it. ``full`` re-reads and re-indexes everything.

The changes are committed in batches of :data:`BATCH_FILES` files, so a first
build of a large folder that is stopped (or killed) keeps what it committed and
the next sync resumes with what is left; a batch the disk refuses is rolled back
alone, leaving the index as the previous batch left it. The generation advances
once the whole folder has been brought in line (``dirty`` in ``meta`` remembers
committed batches that a stopped sync did not yet publish). A large run reads and
chunks its files in a worker process (``parse_worker.py``) while this thread
writes the slice before (``index_writer.py``), and writes as a bulk load
(``Store.bulk``).

Files the settings keep out (larger than ``max_file_bytes``, or binary) are
*declined*: recorded with the reason and the setting that would change it, and
not counted against coverage. A file that should have been read and could not
be (permissions, I/O) is a *failure*, and makes coverage partial. A note with
invalid UTF-8 is indexed with replacement characters, and the problem recorded.

The watermark is a digest of the settings and every (relative path, content
hash) pair, plus each failure and declined file: it depends on content only,
so it is stable across rebuilds. It is kept as an order-independent XOR of
per-file digests, so a one-note change updates it without reading the others.
The generation names one state of the index and advances whenever that state
changes.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat as file_mode
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass

from adapter_sdk.folder.scan import (
    FileStat,
    ScanResult,
    addressable,
    decodable,
    printable,
    scan,
    settled,
)
from adapters.notes.index_writer import (
    UNADDRESSABLE,
    UNADDRESSABLE_FIX,
    IndexWriter,
    WorkItem,
    oversize,
)
from adapters.notes.parse_worker import PARALLEL_AFTER, Preparers, Request
from adapters.notes.prepare import prepare_bytes
from adapters.notes.report import Progress, SyncReport
from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store, row_counts

_ANY = (-1, -1, -1)  # the stat of a file with no record
CHECKPOINT_AFTER = 200
BATCH_FILES = 1000
SLICE_FILES = 250
BULK_AFTER = 2000  # a run reading this many files writes as a bulk load (Store.bulk)


def sync(
    store: Store,
    root: str,
    settings: NotesSettings,
    *,
    full: bool = False,
    only: Iterable[str] | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Progress | None = None,
    parallel: bool | None = None,
) -> SyncReport:
    """Re-check the folder (or just the ``only`` paths) and update the index in batches.

    ``should_stop`` is asked between batches; a stopped sync reports what is left
    in ``files_pending`` and ``complete`` False. ``progress`` hears after each batch.
    ``parallel``: whether files are prepared in a worker process (default: when
    there are enough of them and a second CPU to run it).
    """
    started, started_ns = time.perf_counter(), time.time_ns()
    found = scan(root, settings) if only is None else _stat_paths(root, only)
    report = SyncReport(
        full=full,
        files_scanned=len(found.files),
        skipped_dirs=found.skipped_dirs,
        skipped_links=found.skipped_links,
    )
    # Another process may index this folder too (two commands at once): what it commits
    # after this listing makes the listing's "not recorded" untrue, and each batch checks
    listed_at = _data_version(store.conn())
    work, rechecks = _work(store.conn(), found, full, whole_folder=only is None)
    report.files_pending, report.rechecks_pending = len(work), rechecks
    if progress is not None:
        progress(report)
    # files travel to the preparer in slices, so only a slice's prepared rows are held
    # at a time; a batch (one commit) is several slices
    slice_files = min(SLICE_FILES, BATCH_FILES)
    slices = [work[start : start + slice_files] for start in range(0, len(work), slice_files)]
    per_batch = max(1, BATCH_FILES // slice_files)
    reads = sum(1 for _, stat, _ in work if _to_read(stat, settings))
    if parallel is None:
        parallel = reads >= PARALLEL_AFTER and (os.cpu_count() or 1) > 1
    with Preparers(root, settings, parallel=parallel) as preparers, (
        store.bulk(first_build=not store.meta("build_complete")) if reads >= BULK_AFTER else nullcontext()
    ):
        if slices:
            preparers.submit(_requests(store.conn(), slices[0], full, settings))
        for first in range(0, len(slices), per_batch):
            if should_stop is not None and should_stop():
                report.complete = False
                break
            batch = slices[first : first + per_batch]
            with store.transaction() as conn:
                updater = IndexWriter(conn, root, settings, started_ns, full, report,
                                   listing_stale=_data_version(conn) != listed_at)
                for number, items in enumerate(batch, start=first):
                    prepared = preparers.collect()
                    report.files_prepared_apart += preparers.prepared_apart
                    if number + 1 < len(slices):  # the next slice is prepared while this one is written
                        preparers.submit(_requests(conn, slices[number + 1], full, settings))
                    updater.apply(items, prepared)
                updater.finish()
            report.files_pending -= sum(len(items) for items in batch)
            report.rechecks_pending = min(report.rechecks_pending, report.files_pending)
            if progress is not None:
                progress(report)
    if report.complete:
        with store.transaction() as conn:
            if only is None:
                conn.execute("DELETE FROM dirs")
                conn.executemany("INSERT INTO dirs VALUES (?, ?)", found.dirs.items())
                conn.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [("build_complete", "1"), ("swept_ns", str(started_ns))],
                )
            dirty = conn.execute("SELECT value FROM meta WHERE key = 'dirty'").fetchone()
            if report.changed or full or dirty:
                _advance_generation(conn, settings, time.time_ns())
                conn.execute("DELETE FROM meta WHERE key = 'dirty'")
        report.files_failed = store.conn().execute("SELECT count(*) FROM failures").fetchone()[0]
    if report.files_reindexed >= CHECKPOINT_AFTER:
        # fold a bulk write back into the database file rather than leave a WAL as large
        store.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


@dataclass(frozen=True)
class NoteBytes:
    """A note read from somewhere other than the folder (a commit's tree)."""

    path: str
    stat: FileStat
    data: bytes | None  # None when the note is larger than max_file_bytes and was not read


def index_notes(
    store: Store,
    settings: NotesSettings,
    notes: Iterable[NoteBytes],
    unaddressable: Iterable[str],
    meta: dict[str, str],
) -> SyncReport:
    """Index ``notes`` into an empty store in one transaction, then record ``meta`` with it."""
    started = time.perf_counter()
    now_ns = time.time_ns()
    report = SyncReport(full=True)
    with store.transaction() as conn:
        updater = IndexWriter(conn, "", settings, now_ns, False, report)
        for rel in unaddressable:
            updater.decline(rel, FileStat(0, 0), UNADDRESSABLE, UNADDRESSABLE_FIX)
        for note in notes:
            report.files_scanned += 1
            if note.data is None:
                updater.decline(note.path, note.stat, *oversize(note.stat.size, settings))
            else:
                report.files_read += 1
                updater.take(note.path, note.stat, prepare_bytes(note.path, note.data, settings, None), None)
        updater.finish()
        _advance_generation(conn, settings, now_ns)
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _stat_paths(root: str, paths: Iterable[str]) -> ScanResult:
    """The named paths' stat; a path that is gone (or now a link) is left out, so the
    work for it is its removal."""
    result = ScanResult()
    for rel in paths:
        undecodable = not decodable(rel)
        named = printable(rel) if undecodable else rel
        result.named.append(named)
        try:
            info = os.stat(os.path.join(root, rel))
        except OSError:
            continue
        if not file_mode.S_ISREG(info.st_mode):
            continue
        if undecodable:
            result.undecodable.append(named)
        elif not addressable(rel):
            result.unaddressable.append(rel)
        else:
            result.files[rel] = FileStat(info.st_size, info.st_mtime_ns)
    return result


def _work(
    conn: sqlite3.Connection, found: ScanResult, full: bool, whole_folder: bool
) -> tuple[list[WorkItem], int]:
    """What has to change: new or changed files to read, vanished ones to forget; then,
    last, the notes to read again only because they were recorded too soon after a write
    to trust their stat. Returns the work and how many of its items are such re-checks."""
    if whole_folder:
        known = _known(conn, "", [])
    else:
        names = list(dict.fromkeys([*found.named, *found.files]))
        marks = ",".join("?" * len(names))
        known = _known(conn, f"WHERE path IN ({marks})", names) if names else {}
    work: list[WorkItem] = []
    rechecks: list[WorkItem] = []
    for size, names in ((-1, found.unaddressable), (-2, found.undecodable)):
        # declined by name, a file is recorded with no size or mtime; any other record of
        # it (a note an earlier version indexed under such a name) is replaced
        work += [(rel, FileStat(size, size), rel in known) for rel in names if known.get(rel, _ANY)[:2] != (0, 0)]
    for rel, stat in found.files.items():
        recorded = known.get(rel)
        if full or recorded is None or recorded[:2] != (stat.size, stat.mtime_ns):
            work.append((rel, stat, recorded is not None))
        elif not settled(recorded[1], recorded[2]):
            rechecks.append((rel, stat, True))
    present = set(found.files) | set(found.unaddressable) | set(found.undecodable)
    work += [(rel, None, True) for rel in known if rel not in present]
    return work + rechecks, len(rechecks)


def _to_read(stat: FileStat | None, settings: NotesSettings) -> bool:
    """Whether a work item's file is to be read (not forgotten, unaddressable or oversize)."""
    return stat is not None and 0 <= stat.size <= settings.max_file_bytes


def _requests(conn: sqlite3.Connection, batch: list[WorkItem], full: bool, settings: NotesSettings) -> list[Request]:
    """The files of ``batch`` to read, each with the content hash the index holds for it
    (None when there is none, or ``full`` asks to re-index it whatever it holds)."""
    requests: list[Request] = []
    for rel, stat, recorded in batch:
        if not _to_read(stat, settings):
            continue
        known = None
        if recorded and not full:
            row = conn.execute("SELECT sha256 FROM notes WHERE path = ?", (rel,)).fetchone()
            known = row[0] if row else None
        requests.append((rel, known))
    return requests


def _known(conn: sqlite3.Connection, where: str, args: list[str]) -> dict[str, tuple[int, int, int]]:
    """path -> (size, mtime_ns, checked_ns) of every recorded note, failure and declined file."""
    known: dict[str, tuple[int, int, int]] = {}
    for table in ("declined", "failures", "notes"):
        sql = f"SELECT path, size, mtime_ns, checked_ns FROM {table} {where}"
        for path, size, mtime_ns, checked_ns in conn.execute(sql, args):
            known[path] = (size, mtime_ns, checked_ns)
    return known


def _data_version(conn: sqlite3.Connection) -> int:
    """A number that changes whenever another connection commits to the index."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def _advance_generation(conn: sqlite3.Connection, settings: NotesSettings, now_ns: int) -> None:
    note_rows, chunk_rows = row_counts(conn)
    row = conn.execute("SELECT value FROM meta WHERE key = 'content_digest'").fetchone()
    content = row[0] if row else f"{0:064x}"
    watermark = "fs:" + hashlib.sha256(f"{settings.digest}\0{content}".encode()).hexdigest()[:12]
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation_seq'").fetchone()
    seq = int(row[0]) + 1 if row else 1
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("generation_seq", str(seq)),
            ("generation", f"gen-{seq:06d}-{watermark[3:]}"),
            ("watermark", watermark),
            ("changed_ns", str(now_ns)),
            ("note_count", str(note_rows)),
            ("chunk_count", str(chunk_rows)),
            ("note_rows", str(note_rows)),
            ("chunk_rows", str(chunk_rows)),
        ],
    )

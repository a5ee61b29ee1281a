"""Bring the index in line with the folder, reading only what changed.

Every file is stat'ed; a file whose size and mtime match what was recorded is
trusted without being opened, unless it was modified so close to the moment
it was recorded that a later edit could share its mtime (then it is hashed
again). A file that is read is hashed; only a changed hash re-parses and
re-indexes it. ``full`` re-reads and re-indexes everything in one transaction,
so a failed rebuild leaves the previous index in place.

The watermark is a digest of the settings and every (relative path, content
hash) pair, plus each failure: it depends on content only, so it is stable
across rebuilds. The generation names one state of the index and advances
whenever that state changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from adapter_sdk.lexical import tokenize, unmark_words
from adapters.notes.chunking import ParsedNote, indexable, parse_note
from adapters.notes.scan import FileStat, ScanResult, scan
from adapters.notes.settings import NotesSettings
from adapters.notes.store import SCHEMA, Store

RACY_WINDOW_NS = 2_000_000_000
UNADDRESSABLE = "path contains '#', which a locator cannot name"
CHECKPOINT_AFTER = 200
_BATCH = 500


@dataclass
class SyncReport:
    full: bool = False
    files_scanned: int = 0
    files_read: int = 0
    files_reindexed: int = 0
    files_removed: int = 0
    files_failed: int = 0
    changed: bool = False
    elapsed_ms: float = 0.0
    skipped_dirs: list[str] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)

    def diagnostics(self) -> dict[str, object]:
        return {
            "sync_full": self.full,
            "files_scanned": self.files_scanned,
            "files_read": self.files_read,
            "files_reindexed": self.files_reindexed,
            "files_removed": self.files_removed,
            "sync_ms": round(self.elapsed_ms, 1),
        }


def sync(
    store: Store,
    root: str,
    settings: NotesSettings,
    *,
    full: bool = False,
    only: Iterable[str] | None = None,
) -> SyncReport:
    """Re-check the folder (or just the ``only`` paths) and update the index."""
    started = time.perf_counter()
    now_ns = time.time_ns()
    if only is None:
        found = scan(root, settings)
    else:
        found = _stat_paths(root, only)
    report = SyncReport(
        full=full,
        files_scanned=len(found.files),
        skipped_dirs=found.skipped_dirs,
        skipped_links=found.skipped_links,
    )
    with store.transaction() as conn:
        _Updater(conn, root, settings, now_ns, full, report).apply(found, partial=only is not None)
        if report.changed or full:
            _advance_generation(conn, settings, now_ns)
    if report.files_reindexed >= CHECKPOINT_AFTER:
        # fold a bulk write back into the database file rather than leave a WAL as large
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
        updater = _Updater(conn, "", settings, now_ns, False, report)
        for rel in unaddressable:
            updater.fail(rel, FileStat(0, 0), UNADDRESSABLE)
        for note in notes:
            report.files_scanned += 1
            if note.data is None:
                updater.fail(note.path, note.stat, _oversize(note.stat.size, settings))
            else:
                report.files_read += 1
                updater.take(note.path, note.stat, note.data, None, False)
        updater.finish()
        _advance_generation(conn, settings, now_ns)
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _oversize(size: int, settings: NotesSettings) -> str:
    return f"larger than max_file_bytes ({size} > {settings.max_file_bytes} bytes)"


def _stat_paths(root: str, paths: Iterable[str]) -> ScanResult:
    result = ScanResult()
    for rel in paths:
        try:
            info = os.stat(os.path.join(root, rel))
        except OSError:
            continue
        result.files[rel] = FileStat(info.st_size, info.st_mtime_ns)
    return result


class _Updater:
    def __init__(
        self,
        conn: sqlite3.Connection,
        root: str,
        settings: NotesSettings,
        now_ns: int,
        full: bool,
        report: SyncReport,
    ) -> None:
        self.conn, self.root, self.settings = conn, root, settings
        self.now_ns, self.full, self.report = now_ns, full, report
        self.next_note = (conn.execute("SELECT max(id) FROM notes").fetchone()[0] or 0) + 1
        self.next_chunk = (conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0) + 1
        self.rows: dict[str, list[tuple[object, ...]]] = {
            "notes": [], "chunks": [], "chunk_text": [], "identifiers": [], "failures": []
        }

    def apply(self, found: ScanResult, partial: bool) -> None:
        conn = self.conn
        if partial:
            marks = ",".join("?" * len(found.files))
            known = self._known_notes(f"WHERE path IN ({marks})", list(found.files))
            failed = self._known_failures(f"WHERE path IN ({marks})", list(found.files))
        else:
            known = self._known_notes("", [])
            failed = self._known_failures("", [])
        if self.full:
            # dropping is far cheaper than deleting every FTS row; the transaction keeps
            # the previous index if the rebuild fails
            for table in ("notes", "chunks", "chunk_text", "identifiers", "failures"):
                conn.execute(f"DROP TABLE {table}")
            for statement in SCHEMA.split(";"):
                if statement.strip() and "meta" not in statement:
                    conn.execute(statement)
            known, failed = {}, {}
            self.report.changed = True
        for rel in found.unaddressable:
            self.fail(rel, FileStat(0, 0), UNADDRESSABLE)
        for rel, stat in found.files.items():
            note = known.get(rel)
            if note is not None and _trusted(note[1], note[2], note[3], stat):
                continue
            failure = failed.get(rel)
            if failure is not None and _trusted(failure[0], failure[1], failure[2], stat):
                continue
            self._refresh(rel, stat, note, failure is not None)
        if not partial:
            gone = [n for n in known if n not in found.files]
            for rel in gone:
                self._remove(known[rel][0])
            gone_failures = [f for f in failed if f not in found.files and f not in found.unaddressable]
            conn.executemany("DELETE FROM failures WHERE path = ?", [(f,) for f in gone_failures])
            self.report.files_removed = len(gone) + len(gone_failures)
            self.report.changed |= bool(gone or gone_failures)
        self.finish()

    def finish(self) -> None:
        self._flush()
        self.report.files_failed = self.conn.execute("SELECT count(*) FROM failures").fetchone()[0]

    def _known_notes(self, where: str, args: list[str]) -> dict[str, tuple[int, int, int, int]]:
        sql = f"SELECT path, id, size, mtime_ns, checked_ns FROM notes {where}"
        return {r[0]: r[1:] for r in self.conn.execute(sql, args)}

    def _known_failures(self, where: str, args: list[str]) -> dict[str, tuple[int, int, int]]:
        sql = f"SELECT path, size, mtime_ns, checked_ns FROM failures {where}"
        return {r[0]: r[1:] for r in self.conn.execute(sql, args)}

    def _refresh(
        self,
        rel: str,
        stat: FileStat,
        note: tuple[int, int, int, int] | None,
        was_failed: bool,
    ) -> None:
        limit = self.settings.max_file_bytes
        if stat.size > limit:
            self._replace_with_failure(rel, stat, note, _oversize(stat.size, self.settings))
            return
        try:
            with open(os.path.join(self.root, rel), "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            self._replace_with_failure(rel, stat, note, f"unreadable: {exc.strerror or exc}")
            return
        self.report.files_read += 1
        self.take(rel, stat, data, note, was_failed)

    def take(
        self,
        rel: str,
        stat: FileStat,
        data: bytes,
        note: tuple[int, int, int, int] | None,
        was_failed: bool,
    ) -> None:
        """Index the bytes of one note (replacing ``note``), or record why they cannot be."""
        limit = self.settings.max_file_bytes
        if len(data) > limit:
            self._replace_with_failure(rel, stat, note, f"larger than max_file_bytes (> {limit} bytes)")
            return
        digest = hashlib.sha256(data).hexdigest()
        if note is not None and not was_failed and self._hash_of(note[0]) == digest:
            self.conn.execute(
                "UPDATE notes SET size = ?, mtime_ns = ?, checked_ns = ? WHERE id = ?",
                (stat.size, stat.mtime_ns, self.now_ns, note[0]),
            )
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._replace_with_failure(rel, stat, note, f"not valid UTF-8 (byte {exc.start})")
            return
        if "\x00" in text:
            self._replace_with_failure(rel, stat, note, "contains NUL bytes (not a text file)")
            return
        if note is not None:
            self._remove(note[0])
        if was_failed:
            self.conn.execute("DELETE FROM failures WHERE path = ?", (rel,))
        self._insert(rel, stat, digest, parse_note(rel, text))
        self.report.files_reindexed += 1
        self.report.changed = True

    def _hash_of(self, note_id: int) -> str:
        row = self.conn.execute("SELECT sha256 FROM notes WHERE id = ?", (note_id,)).fetchone()
        return str(row[0])

    def _replace_with_failure(
        self, rel: str, stat: FileStat, note: tuple[int, int, int, int] | None, reason: str
    ) -> None:
        if note is not None:
            self._remove(note[0])
        self.fail(rel, stat, reason)

    def fail(self, rel: str, stat: FileStat, reason: str) -> None:
        previous = self.conn.execute("SELECT reason FROM failures WHERE path = ?", (rel,)).fetchone()
        self.conn.execute(
            "INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?)",
            (rel, stat.size, stat.mtime_ns, self.now_ns, reason),
        )
        if previous is None or previous[0] != reason:
            self.report.changed = True

    def _remove(self, note_id: int) -> None:
        conn = self.conn
        self._flush()
        conn.execute(
            "DELETE FROM chunk_text WHERE rowid IN (SELECT id FROM chunks WHERE note_id = ?)",
            (note_id,),
        )
        conn.execute("DELETE FROM chunks WHERE note_id = ?", (note_id,))
        conn.execute("DELETE FROM identifiers WHERE note_id = ?", (note_id,))
        conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def _insert(self, rel: str, stat: FileStat, digest: str, parsed: ParsedNote) -> None:
        note_id = self.next_note
        self.next_note += 1
        name = rel.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        project = rel.split("/", 1)[0].lower() if "/" in rel else ""
        front = parsed.front
        self.rows["notes"].append((
            note_id, rel, stem.lower(), project, stat.size, stat.mtime_ns, self.now_ns, digest,
            parsed.title, json.dumps(front.to_json()), int(bool(front.supersedes)),
            int(bool(front.problems)), len(parsed.chunks),
        ))
        for chunk in parsed.chunks:
            chunk_id = self.next_chunk
            self.next_chunk += 1
            self.rows["chunks"].append((
                chunk_id, note_id, chunk.ordinal, chunk.start_line, chunk.end_line,
                chunk.heading, json.dumps(chunk.heading_path), chunk.preview,
            ))
            self.rows["chunk_text"].append(
                (chunk_id, unmark_words(chunk.title), indexable(chunk.indexed_body))
            )
        for key, kind in _identifiers(rel, stem, front.aliases, front.note_id):
            self.rows["identifiers"].append((key, note_id, kind))
        if len(self.rows["chunk_text"]) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        rows, conn = self.rows, self.conn
        conn.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows["notes"])
        conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?)", rows["chunks"])
        conn.executemany(
            "INSERT INTO chunk_text(rowid, title, body) VALUES (?,?,?)", rows["chunk_text"]
        )
        conn.executemany("INSERT INTO identifiers VALUES (?,?,?)", rows["identifiers"])
        for batch in rows.values():
            batch.clear()


def _trusted(size: int, mtime_ns: int, checked_ns: int, stat: FileStat) -> bool:
    """Unchanged stat, recorded long enough after the last write that no edit could hide."""
    return (
        size == stat.size
        and mtime_ns == stat.mtime_ns
        and checked_ns - mtime_ns > RACY_WINDOW_NS
    )


def _identifiers(
    rel: str, stem: str, aliases: list[str], note_id: str | None
) -> list[tuple[str, str]]:
    """Keys a query may name this note by. Names match whole query words; aliases and ids
    match as contiguous token runs. A one-word file stem is prose, not an identifier."""
    keys = [(rel.lower(), "path"), (rel.rsplit(".", 1)[0].lower(), "path"), (rel.rsplit("/", 1)[-1].lower(), "name")]
    if len(tokenize(stem)) >= 2:
        keys.append((stem.lower(), "name"))
    keys += [(" ".join(tokenize(a)), "alias") for a in aliases if tokenize(a)]
    if note_id and tokenize(note_id):
        keys.append((" ".join(tokenize(note_id)), "id"))
    return list(dict.fromkeys(keys))


def _advance_generation(conn: sqlite3.Connection, settings: NotesSettings, now_ns: int) -> None:
    digest = hashlib.sha256(settings.digest.encode())
    for path, sha in conn.execute("SELECT path, sha256 FROM notes ORDER BY path"):
        digest.update(f"{path}\0{sha}\n".encode())
    for path, size, reason in conn.execute("SELECT path, size, reason FROM failures ORDER BY path"):
        digest.update(f"{path}\0!{size}\0{reason}\n".encode())
    watermark = "fs:" + digest.hexdigest()[:12]
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation_seq'").fetchone()
    seq = int(row[0]) + 1 if row else 1
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("generation_seq", str(seq)),
            ("generation", f"gen-{seq:06d}-{watermark[3:]}"),
            ("watermark", watermark),
            ("changed_ns", str(now_ns)),
            ("note_count", str(conn.execute("SELECT count(*) FROM notes").fetchone()[0])),
            ("chunk_count", str(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])),
        ],
    )

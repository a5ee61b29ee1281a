"""Write prepared notes into the index, inside the transaction of one batch.

Each note is inserted, replaced under its own id (a chunk whose text is unchanged
keeps its row), or forgotten; a file that is not indexed is recorded as a
*failure* (it should have been read and could not be) or as *declined* (the
settings keep it out), with why and what would change it. The content digest, an
order-independent XOR of per-file digests from which the watermark is made, is
kept in step with every change, so a one-note change updates it without reading
the others. Rows are held and written in bulk, deletes before inserts.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from typing import Any

import orjson

from adapter_sdk.folder.scan import FileStat
from adapters.notes.prepare import (
    Binary,
    Outside,
    Oversize,
    Prepared,
    PreparedNote,
    Unchanged,
    Unreadable,
    prepare_file,
)
from adapters.notes.report import SyncReport
from adapters.notes.settings import NotesSettings
from adapters.notes.store import row_counts

UNADDRESSABLE = "path contains '#' or a control character (a newline, say), which a locator cannot name"
UNADDRESSABLE_FIX = "rename the file without '#' or control characters"
UNDECODABLE = "path is not UTF-8, which a locator cannot name"
UNDECODABLE_FIX = "rename the file (or its folder) with a UTF-8 name"
# the stat a work item carries for a file declined by its name alone, and why
_NAMED_BADLY = {-1: (UNADDRESSABLE, UNADDRESSABLE_FIX), -2: (UNDECODABLE, UNDECODABLE_FIX)}
BINARY = "contains NUL bytes: not a text note"
BINARY_FIX = "add the path to the 'exclude' setting"

# Pending rows are written once this many are held, while the preparer reads the next
# slice. FTS5 starts a new index segment whenever a write's rowid is below the one
# before it, so each flush that deletes replaced chunks after others were inserted costs
# a segment, and merging segments is most of what an update costs: while deletes are
# pending, rows are held until many more (or this much text) are.
_FLUSH_ROWS = 500
_FLUSH_ROWS_DELETING = 20_000
_FLUSH_BYTES = 8 << 20

# one unit of work: a path and its stat to (re)read, or None to forget the path, and
# whether the index holds any record of it yet (a first build's files have none)
WorkItem = tuple[str, FileStat | None, bool]


def oversize(size: int, settings: NotesSettings) -> tuple[str, str]:
    """Why a note over the size cap is declined, and the setting that would admit it."""
    return (
        f"larger than max_file_bytes ({size} > {settings.max_file_bytes} bytes)",
        f"raise max_file_bytes to at least {size}, or add the path to the 'exclude' setting",
    )


def _file_digest(path: str, content: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{path}\0{content}".encode()).digest(), "big")


class IndexWriter:
    """Applies work items inside one transaction, keeping the content digest in step."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        root: str,
        settings: NotesSettings,
        checked_ns: int,
        full: bool,
        report: SyncReport,
        listing_stale: bool = False,
    ) -> None:
        self.conn, self.root, self.settings = conn, root, settings
        # when the work was listed, before any of it was read: each record's checked_ns
        self.checked_ns, self.full, self.report = checked_ns, full, report
        self.next_note = (conn.execute("SELECT max(id) FROM notes").fetchone()[0] or 0) + 1
        self.next_chunk = (conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0) + 1
        row = conn.execute("SELECT value FROM meta WHERE key = 'content_digest'").fetchone()
        self.digest = int(row[0], 16) if row else 0
        self.note_rows, self.chunk_rows = row_counts(conn)
        self.real_root = os.path.realpath(root) if root else ""
        self.recorded = True  # whether the path at hand may have rows to replace
        # whether another connection wrote since the work was listed: then any path may
        self.listing_stale = listing_stale
        self.rows: dict[str, list[tuple[object, ...]]] = {
            "notes": [], "chunks": [], "chunk_text": [], "identifiers": []
        }
        # what goes with the next flush, before its inserts
        self.note_deletes: list[int] = []  # notes gone, with every row of theirs
        self.replaced_notes: list[int] = []  # notes re-indexed: their own row and identifiers
        self.chunk_deletes: list[int] = []  # chunks of re-indexed notes whose text is gone
        self.chunk_moves: list[tuple[object, ...]] = []  # kept chunks' new places (chunks rows)
        self.pending_bytes = 0  # text of the chunk rows not yet written

    def apply(self, batch: list[WorkItem], prepared: list[Prepared]) -> None:
        """Apply ``batch``; ``prepared`` holds, in order, what its files to read held."""
        outcomes = iter(prepared)
        for rel, stat, recorded in batch:
            self.recorded = recorded or self.listing_stale
            if stat is None:
                self._forget(rel)
                self.report.files_removed += 1
            elif stat.size < 0:
                self._forget_note(rel)
                self.decline(rel, FileStat(0, 0), *_NAMED_BADLY[stat.size])
            elif stat.size > self.settings.max_file_bytes:
                self._forget_note(rel)
                self.decline(rel, stat, *oversize(stat.size, self.settings))
            else:
                self._refresh(rel, stat, next(outcomes))
        self.recorded = True

    def finish(self) -> None:
        self._flush()
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [
                ("content_digest", f"{self.digest:064x}"),
                ("note_rows", str(self.note_rows)),
                ("chunk_rows", str(self.chunk_rows)),
            ] + ([("dirty", "1")] if self.report.changed else []),
        )
        self.report.files_failed = self.conn.execute("SELECT count(*) FROM failures").fetchone()[0]

    def _refresh(self, rel: str, stat: FileStat, outcome: Prepared) -> None:
        if not isinstance(outcome, Outside | Unreadable):
            self.report.files_read += 1
        self.take(rel, stat, outcome, self._note(rel) if self.recorded else None)

    def _note(self, rel: str) -> tuple[int, str, int] | None:
        """The recorded note at ``rel``: its id, content digest and number of chunks."""
        row = self.conn.execute("SELECT id, sha256, chunk_count FROM notes WHERE path = ?", (rel,)).fetchone()
        return (int(row[0]), str(row[1]), int(row[2])) if row else None

    def take(self, rel: str, stat: FileStat, outcome: Prepared, note: tuple[int, str, int] | None) -> None:
        """Index one note as prepared (replacing ``note``), or record why it is not."""
        if isinstance(outcome, Unchanged):
            if note is not None and note[1] == outcome.digest:
                self.conn.execute(
                    "UPDATE notes SET size = ?, mtime_ns = ?, checked_ns = ? WHERE id = ?",
                    (stat.size, stat.mtime_ns, self.checked_ns, note[0]),
                )
            else:  # the index moved on since the file was prepared: prepare it afresh
                self.take(rel, stat, prepare_file(self.root, self.real_root, rel, self.settings, None), note)
        elif isinstance(outcome, Outside):
            self._forget(rel)
            self.report.skipped_links.append(rel)
        elif isinstance(outcome, Unreadable):
            self._forget_note(rel)
            self.fail(rel, stat, outcome.reason)
        elif isinstance(outcome, Oversize):
            self._forget_note(rel)
            self.decline(rel, stat, *oversize(outcome.size, self.settings))
        elif isinstance(outcome, Binary):
            self._forget_note(rel)
            self.decline(rel, stat, BINARY, BINARY_FIX)
        elif isinstance(outcome, PreparedNote):
            if note is not None and not self.full:
                self._forget_in("failures", rel)
                self._forget_in("declined", rel)
                self._replace(rel, stat, note, outcome)
            else:
                self._forget(rel)
                self._insert(rel, stat, outcome)
            self.report.files_reindexed += 1
            self.report.changed = True

    def fail(self, rel: str, stat: FileStat, reason: str) -> None:
        """Record a file that should have been read and could not be."""
        self._record("failures", rel, (rel, stat.size, stat.mtime_ns, self.checked_ns, reason), reason)

    def decline(self, rel: str, stat: FileStat, reason: str, fix: str) -> None:
        """Record a file the settings keep out of the index, and how to let it in."""
        row = (rel, stat.size, stat.mtime_ns, self.checked_ns, reason, fix)
        self._record("declined", rel, row, reason)

    def _record(self, table: str, rel: str, row: tuple[object, ...], reason: str) -> None:
        other = "declined" if table == "failures" else "failures"
        previous = None
        if self.recorded:
            self._forget_in(other, rel)
            previous = self.conn.execute(f"SELECT reason FROM {table} WHERE path = ?", (rel,)).fetchone()
        marker = "!" if table == "failures" else "?"
        if previous is not None:
            self.digest ^= _file_digest(rel, marker + previous[0])
        self.digest ^= _file_digest(rel, marker + reason)
        marks = ",".join("?" * len(row))
        self.conn.execute(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", row)
        if previous is None or previous[0] != reason:
            self.report.changed = True

    def _forget(self, rel: str) -> None:
        """Drop every record of ``rel``: its note, failure or declined entry."""
        if not self.recorded:
            return
        self._forget_note(rel)
        self._forget_in("failures", rel)
        self._forget_in("declined", rel)

    def _forget_in(self, table: str, rel: str) -> None:
        row = self.conn.execute(f"SELECT reason FROM {table} WHERE path = ?", (rel,)).fetchone()
        if row is not None:
            self.digest ^= _file_digest(rel, ("!" if table == "failures" else "?") + row[0])
            self.conn.execute(f"DELETE FROM {table} WHERE path = ?", (rel,))
            self.report.changed = True

    def _forget_note(self, rel: str) -> None:
        note = self._note(rel) if self.recorded else None
        if note is None:
            return
        note_id, sha, chunks = note
        self.digest ^= _file_digest(rel, sha)
        self.note_rows -= 1
        self.chunk_rows -= chunks
        # the rows go with the next flush, before its inserts: FTS5 writes a delete that
        # lands between inserts as a segment of its own, and merging those is most of the cost
        self.note_deletes.append(note_id)
        self.report.changed = True

    def _replace(self, rel: str, stat: FileStat, recorded: tuple[int, str, int], note: PreparedNote) -> None:
        """Re-index a recorded note under its own id, keeping each chunk whose text is
        unchanged: FTS5 deletes a row by tokenizing its old text again, so an edit that
        touches one section of a note costs that section, not the whole note."""
        note_id, digest, chunk_count = recorded
        self.digest ^= _file_digest(rel, digest)
        self.note_rows -= 1
        self.chunk_rows -= chunk_count
        self.replaced_notes.append(note_id)
        old: dict[tuple[str, str], list[int]] = {}
        rows = self.conn.execute(
            "SELECT c.id, t.title, t.body FROM chunks c JOIN chunk_text t ON t.rowid = c.id"
            " WHERE c.note_id = ? ORDER BY c.ordinal", (note_id,),
        )
        for chunk_id, title, body in rows:
            old.setdefault((title, body), []).append(chunk_id)
        kept = [old[text].pop(0) if old.get(text) else None for text in note.texts]
        self.chunk_deletes += [chunk_id for ids in old.values() for chunk_id in ids]
        self._insert(rel, stat, note, note_id=note_id, kept=kept)

    def _insert(
        self, rel: str, stat: FileStat, note: PreparedNote,
        note_id: int | None = None, kept: list[int | None] | None = None,
    ) -> None:
        """Add ``note``'s rows: under a new id, or under ``note_id`` with the chunks in
        ``kept`` (per chunk, the id of a recorded chunk of the same text, or None)."""
        if note_id is None:
            note_id = self.next_note
            self.next_note += 1
        self.note_rows += 1
        self.chunk_rows += len(note.chunks)
        self.digest ^= _file_digest(rel, note.digest)
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        project = rel.split("/", 1)[0].lower() if "/" in rel else ""
        self.rows["notes"].append((
            note_id, rel, stem.lower(), project, stat.size, stat.mtime_ns, self.checked_ns, note.digest,
            note.title, note.front, int(note.has_supersedes), int(note.has_problems),
            len(note.chunks), note.decode_problem,
        ))
        for chunk, (title, body), kept_id in zip(
            note.chunks, note.texts, kept or [None] * len(note.chunks), strict=True
        ):
            if kept_id is not None:
                self.chunk_moves.append((kept_id, note_id, *chunk))
                continue
            chunk_id = self.next_chunk
            self.next_chunk += 1
            self.rows["chunks"].append((chunk_id, note_id, *chunk))
            self.rows["chunk_text"].append((chunk_id, title, body))
            self.pending_bytes += len(title) + len(body)
        for key, kind in note.identifiers:
            self.rows["identifiers"].append((key, note_id, kind))
        deleting = len(self.chunk_deletes) + len(self.note_deletes)
        rows = len(self.rows["chunk_text"]) + len(self.chunk_moves) + deleting
        if rows >= (_FLUSH_ROWS_DELETING if deleting else _FLUSH_ROWS) or self.pending_bytes >= _FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        """Write the pending rows, each table's in one statement: its rows travel as one
        JSON array, so SQLite works through them without handing control back to Python
        per row (a search thread running meanwhile never stalls the writer row by row)."""
        rows, conn = self.rows, self.conn
        if self.note_deletes:
            gone = _json(self.note_deletes)
            conn.execute(
                "DELETE FROM chunk_text WHERE rowid IN (SELECT id FROM chunks WHERE note_id IN"
                " (SELECT value FROM json_each(?)))", (gone,),
            )
            for sql in _DELETES:
                conn.execute(sql, (gone,))
            self.note_deletes.clear()
        if self.chunk_deletes:
            gone = _json(self.chunk_deletes)
            conn.execute("DELETE FROM chunk_text WHERE rowid IN (SELECT value FROM json_each(?))", (gone,))
            conn.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (gone,))
            self.chunk_deletes.clear()
        if self.replaced_notes:
            gone = _json(self.replaced_notes)
            for sql in _DELETES[1:]:  # the note's row and identifiers; its chunks were sorted out
                conn.execute(sql, (gone,))
            self.replaced_notes.clear()
        if self.chunk_moves:
            conn.execute(_MOVE_SQL, (_json(self.chunk_moves),))
            self.chunk_moves.clear()
        for table, columns in _COLUMNS.items():
            if rows[table]:
                conn.execute(_insert_sql(table, columns), (_json(rows[table]),))
                rows[table].clear()
        self.pending_bytes = 0


_DELETES = (
    "DELETE FROM chunks WHERE note_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM identifiers WHERE note_id IN (SELECT value FROM json_each(?))",
    "DELETE FROM notes WHERE id IN (SELECT value FROM json_each(?))",
)
_COLUMNS = {
    "notes": ("id", "path", "stem", "project", "size", "mtime_ns", "checked_ns", "sha256", "title",
              "front", "has_supersedes", "has_problems", "chunk_count", "decode_problem"),
    "chunks": ("id", "note_id", "ordinal", "start_line", "end_line", "heading", "heading_path", "preview"),
    "chunk_text": ("rowid", "title", "body"),
    "identifiers": ("key", "note_id", "kind"),
}
# A kept chunk's row takes its new place in the note (an update, so the ranker's journal
# triggers, which fire on inserts and deletes, see nothing: the chunk's text is the same).
_MOVE_SQL = (
    "UPDATE chunks SET " + ", ".join(
        f"{column} = json_extract(moved.value, '$[{index}]')"
        for index, column in enumerate(_COLUMNS["chunks"]) if column != "id"
    ) + " FROM json_each(?) AS moved WHERE chunks.id = json_extract(moved.value, '$[0]')"
)


def _json(rows: list[Any]) -> str:
    """``rows`` as the JSON text ``json_each`` reads. orjson writes it five times as fast as
    ``json``, which took 4.7-6.1 s of the writer's thread in a first build of 100k notes."""
    return orjson.dumps(rows).decode()


def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """An INSERT of every row of a JSON array of rows (each an array, in ``columns`` order)."""
    values = ", ".join(f"json_extract(value, '$[{index}]')" for index in range(len(columns)))
    return f"INSERT INTO {table}({', '.join(columns)}) SELECT {values} FROM json_each(?)"

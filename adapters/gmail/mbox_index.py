"""The mbox index: one SQLite file (FTS5) in the adapter's workdir.

Tables: ``messages`` (one row per message: thread, byte offset and length in
the mbox, date, headers, labels), ``message_text`` (FTS5 over each message's
headers and body text, Porter-stemmed), ``malformed`` (byte ranges that are not messages,
and why) and ``meta`` (format, file, size, mtime, how far the file is
indexed, digests of the indexed bytes' head and tail).

Catching up: an unchanged file (size, mtime) is not read. A file that only
grew — same head and tail digests, a message separator at the old end — is
read from the stored offset. Anything else is rebuilt from the start.
Indexing stops at a message boundary when time runs out and resumes there.
The file is a cache: deleting it costs a rebuild, never a different answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from adapter_sdk.lexical import STEMMED_FTS5_TOKENIZER
from adapter_sdk.workdir import exclusive, held_elsewhere
from adapters.gmail.mbox_reader import (
    SEPARATOR,
    MalformedMessage,
    ParsedMessage,
    parse,
    read_messages,
)
from adapters.gmail.threads import MessageHeader, ThreadSummary

FORMAT = "gmail-mbox-fts5/2"
INDEX_FILE = "gmail-mbox.sqlite"
DIGEST_BYTES = 4096
COMMIT_EVERY = 500
LOCK_WAIT_MS = 5000  # how long a statement waits on another connection's write (sqlite3's default)
HEADER_WEIGHT = 2.0
BODY_WEIGHT = 1.0
HIDDEN_LABELS = frozenset({"SPAM", "TRASH"})

SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE messages(
    id INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    date_ts REAL,
    sender TEXT NOT NULL,
    recipients TEXT NOT NULL,
    subject TEXT NOT NULL,
    labels TEXT NOT NULL,
    hidden INTEGER NOT NULL,
    message_id TEXT NOT NULL
);
CREATE INDEX messages_thread ON messages(thread_id, date_ts);
CREATE VIRTUAL TABLE message_text USING fts5(
    header, body, tokenize = "{STEMMED_FTS5_TOKENIZER}"
);
CREATE TABLE malformed(offset INTEGER PRIMARY KEY, length INTEGER NOT NULL, reason TEXT NOT NULL);
"""  # committed with the format row, so no reader sees half a schema


@dataclass(frozen=True, slots=True)
class SyncReport:
    action: str  # unchanged | built | appended | rebuilt | locked (another process is indexing)
    bytes_read: int
    messages_indexed: int
    malformed_found: int
    complete: bool


@dataclass(frozen=True, slots=True)
class MessageHit:
    message_row: int
    thread_id: str
    score: float
    header: str
    body: str


@dataclass(frozen=True, slots=True)
class DateWindow:
    since: float | None = None
    until: float | None = None  # inclusive; as_of folds in here

    def clause(self, column: str) -> tuple[str, list[float]]:
        clauses, args = [], []
        if self.since is not None:
            clauses.append(f"{column} >= ?")
            args.append(self.since)
        if self.until is not None:
            clauses.append(f"{column} <= ?")
            args.append(self.until)
        return "".join(f" AND {c}" for c in clauses), args


class MboxIndex:
    def __init__(self, mbox_path: Path, workdir: Path) -> None:
        self.mbox_path = mbox_path
        self.path = workdir / INDEX_FILE
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # what searches read that only an index write changes, kept for the state it was read in
        self._kept_state: tuple[str, ...] = ()
        self._kept: dict[str, Any] = {}

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self._conn = self._open()
            yield self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with exclusive(self.path.parent):  # another process may be making it too
            return self._checked()

    def _checked(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        try:
            fmt = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            fmt = None
        if fmt is None or fmt[0] != FORMAT:
            conn.close()
            self.path.unlink(missing_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            conn.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
            conn.execute("COMMIT")
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- catching up with the file -------------------------------------------

    def sync(self, stop_at: float, *, full: bool = False) -> SyncReport:
        """Index what the file gained; stop at a message boundary after ``stop_at`` (monotonic)."""
        stat = os.stat(self.mbox_path)
        real = os.path.realpath(self.mbox_path)
        with self.connection() as conn:
            if not full and _up_to_date(self._meta(conn), real, stat):
                return SyncReport("unchanged", 0, 0, 0, True)
            # Decided and written under the write lock: another process indexing the same
            # file (two commands at once) is either done with what it decided, or waits.
            if not _begin_writing(conn, stop_at):
                return SyncReport("locked", 0, 0, 0, False)
            try:
                return self._sync_locked(conn, stat, real, stop_at, full)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _sync_locked(
        self, conn: sqlite3.Connection, stat: os.stat_result, real: str, stop_at: float, full: bool
    ) -> SyncReport:
        meta = self._meta(conn)
        indexed_to = int(meta.get("indexed_to", 0))
        same_file = meta.get("path") == real
        if not full and _up_to_date(meta, real, stat):
            conn.execute("COMMIT")  # another process indexed it meanwhile
            return SyncReport("unchanged", 0, 0, 0, True)
        if full or not same_file or not self._extends_indexed_bytes(meta, indexed_to, stat):
            action = "rebuilt" if "path" in meta else "built"
            self._reset(conn, real)
            indexed_to = 0
        elif indexed_to == stat.st_size:  # touched, same bytes
            self._set_meta(conn, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
            conn.execute("COMMIT")
            return SyncReport("unchanged", 0, 0, 0, True)
        else:
            action = "appended" if indexed_to else "built"
        return self._index_from(conn, indexed_to, stat, stop_at, action)

    def _extends_indexed_bytes(
        self, meta: dict[str, str], indexed_to: int, stat: os.stat_result
    ) -> bool:
        if indexed_to == 0:
            return True
        if stat.st_size < indexed_to:
            return False
        head, tail = _digests(self.mbox_path, indexed_to)
        if (head, tail) != (meta.get("head"), meta.get("tail")):
            return False
        if stat.st_size == indexed_to:
            return True
        with self.mbox_path.open("rb") as handle:
            handle.seek(indexed_to)
            return handle.read(len(SEPARATOR)) == SEPARATOR

    def _reset(self, conn: sqlite3.Connection, real: str) -> None:
        """Empty the index, in the write transaction under way."""
        for table in ("messages", "message_text", "malformed"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM meta WHERE key != 'format'")
        generation = int(time.time() * 1000)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("path", real), ("indexed_to", "0"), ("generation", str(generation)),
        ])

    def _index_from(
        self, conn: sqlite3.Connection, start: int, stat: os.stat_result, stop_at: float,
        action: str,
    ) -> SyncReport:
        """Index from byte ``start`` in the write transaction under way, committing every
        ``COMMIT_EVERY`` messages; stops early if another process took the index further
        between two commits (it is indexing the same file)."""
        indexed_to = start
        indexed = malformed = pending = 0
        for raw in read_messages(self.mbox_path, start):
            try:
                _insert(conn, parse(raw))
                indexed += 1
            except MalformedMessage as exc:
                conn.execute("INSERT OR REPLACE INTO malformed VALUES (?, ?, ?)",
                             (raw.offset, raw.length, str(exc)))
                malformed += 1
            indexed_to = raw.offset + raw.length
            pending += 1
            if pending >= COMMIT_EVERY:
                self._checkpoint(conn, indexed_to)
                conn.execute("COMMIT")
                pending = 0
                if not _begin_writing(conn, stop_at):
                    return SyncReport(action, indexed_to - start, indexed, malformed, False)
                if self._indexed_to(conn) != indexed_to:
                    conn.execute("COMMIT")
                    return SyncReport(action, indexed_to - start, indexed, malformed, False)
            if time.monotonic() >= stop_at:
                break
        complete = indexed_to >= stat.st_size
        self._checkpoint(conn, indexed_to)
        if complete:
            self._set_meta(conn, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
        conn.execute("COMMIT")
        return SyncReport(action, indexed_to - start, indexed, malformed, complete)

    @staticmethod
    def _meta(conn: sqlite3.Connection) -> dict[str, str]:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @staticmethod
    def _indexed_to(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'indexed_to'").fetchone()
        return int(row[0]) if row else 0

    def _checkpoint(self, conn: sqlite3.Connection, indexed_to: int) -> None:
        """Record how far the file is indexed, with digests that prove those bytes later."""
        head, tail = _digests(self.mbox_path, indexed_to)
        self._set_meta(conn, indexed_to=indexed_to, head=head, tail=tail)

    @staticmethod
    def _set_meta(conn: sqlite3.Connection, **values: object) -> None:
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         [(key, str(value)) for key, value in values.items()])

    # -- reading ---------------------------------------------------------------

    def message_hits(
        self, tiers: list[tuple[str, str]], window: DateWindow, limit: int
    ) -> tuple[str, list[MessageHit]]:
        """The name of the first (name, FTS5 expression) tier that admits ``limit``
        messages (else of the last), and its best ``limit``: BM25 is computed for every
        message an expression admits, so when the messages holding every term fill the
        pool, those holding only some are never ranked (ranks of two expressions are
        never mixed)."""
        where, args = window.clause("m.date_ts")
        sql = (
            f"SELECT m.id, m.thread_id, bm25(message_text, {HEADER_WEIGHT}, {BODY_WEIGHT}) AS s,"
            " t.header, t.body FROM message_text t JOIN messages m ON m.id = t.rowid"
            f" WHERE message_text MATCH ? AND m.hidden = 0{where} ORDER BY s LIMIT ?"
        )
        admitted_by, rows = tiers[-1][0], []
        with self.connection() as conn:
            for tier, match in tiers:
                rows = conn.execute(sql, [match, *args, limit]).fetchall()
                if len(rows) >= limit:
                    admitted_by = tier
                    break
        return admitted_by, [MessageHit(r[0], r[1], -float(r[2]), r[3], r[4]) for r in rows]

    def document_frequencies(self, stems: set[str]) -> tuple[dict[str, int], int]:
        """Each stem → how many indexed messages hold it, and how many there are (the IDF
        weights' inputs, ``adapter_sdk.relevance``); counts are kept until the index changes."""
        if not stems:
            return {}, 0
        with self.connection() as conn:
            kept = self._kept_for(conn)
            frequencies: dict[str, int] = kept.setdefault("frequencies", {})
            missing = sorted(stems - frequencies.keys())
            if missing:
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_terms"
                             " USING fts5vocab(main, message_text, row)")
                marks = ",".join("?" * len(missing))
                found = dict(conn.execute(
                    f"SELECT term, doc FROM temp.message_terms WHERE term IN ({marks})", missing
                ).fetchall())
                frequencies.update({stem: int(found.get(stem, 0)) for stem in missing})
            if "messages" not in kept:
                kept["messages"] = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
            return {stem: frequencies[stem] for stem in stems}, kept["messages"]

    def _kept_for(self, conn: sqlite3.Connection) -> dict[str, Any]:
        """What was read for the index's current state; emptied when the state moved on
        (a rebuild starts a new generation; every batch indexed advances ``indexed_to``)."""
        state = tuple(
            value for (value,) in conn.execute(
                "SELECT value FROM meta WHERE key IN ('generation', 'indexed_to') ORDER BY key"
            )
        )
        if state != self._kept_state:
            self._kept_state, self._kept = state, {}
        return self._kept

    def threads(self, thread_ids: list[str], window: DateWindow) -> dict[str, ThreadSummary]:
        """Thread summaries without spam/trash messages; later than ``window.until`` left out."""
        if not thread_ids:
            return {}
        until = DateWindow(until=window.until)
        where, args = until.clause("date_ts")
        marks = ",".join("?" * len(thread_ids))
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT thread_id, message_id, sender, recipients, subject, date_ts, labels,"
                f" hidden FROM messages WHERE thread_id IN ({marks}){where}"
                " ORDER BY date_ts IS NULL, date_ts, offset",
                [*thread_ids, *args],
            ).fetchall()
        grouped: dict[str, list[MessageHeader]] = {}
        for thread_id, message_id, sender, recipients, subject, date_ts, labels, is_hidden in rows:
            if is_hidden:
                continue
            grouped.setdefault(thread_id, []).append(MessageHeader(
                message_id=message_id, sender=sender, recipients=recipients, subject=subject,
                date=datetime.fromtimestamp(date_ts, UTC) if date_ts is not None else None,
                labels=_labels(labels),
            ))
        return {tid: ThreadSummary(tid, tuple(messages)) for tid, messages in grouped.items()}

    def thread_ranges(self, thread_id: str) -> list[tuple[int, int]]:
        with self.connection() as conn:
            return conn.execute(
                "SELECT offset, length FROM messages WHERE thread_id = ?"
                " ORDER BY date_ts IS NULL, date_ts, offset", (thread_id,),
            ).fetchall()

    def stats(self) -> dict[str, Any]:
        with self.connection() as conn:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            kept = self._kept_for(conn)
            if "counts" not in kept:
                kept["counts"] = conn.execute(
                    "SELECT count(*), count(DISTINCT thread_id), max(date_ts) FROM messages"
                ).fetchone()
            messages, threads, newest = kept["counts"]
            malformed = conn.execute("SELECT count(*) FROM malformed").fetchone()[0]
            sample = conn.execute(
                "SELECT offset, reason FROM malformed ORDER BY offset LIMIT 5"
            ).fetchall()
        return {
            "messages": int(messages), "threads": int(threads), "malformed": int(malformed),
            "malformed_sample": [{"offset": o, "reason": r} for o, r in sample],
            "newest": datetime.fromtimestamp(newest, UTC) if newest is not None else None,
            "indexed_to": int(meta.get("indexed_to", 0)),
            "generation": meta.get("generation", ""),
        }


@lru_cache(maxsize=4096)
def _labels(stored: str) -> tuple[str, ...]:
    """A message's labels from their stored JSON (a mailbox has few distinct label sets)."""
    return tuple(json.loads(stored))


def _up_to_date(meta: dict[str, str], real: str, stat: os.stat_result) -> bool:
    """Whether the index holds all of this file, as it is on disk now."""
    return (meta.get("path") == real and meta.get("indexed_to") == str(stat.st_size)
            and meta.get("size") == str(stat.st_size) and meta.get("mtime_ns") == str(stat.st_mtime_ns))


def _begin_writing(conn: sqlite3.Connection, stop_at: float) -> bool:
    """Open a write transaction, waiting for another process's (it is indexing the same
    file) until ``stop_at`` at most; False if it still holds the index then."""
    wait_ms = min(max(int((stop_at - time.monotonic()) * 1000), 0), LOCK_WAIT_MS)
    conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if not held_elsewhere(exc):
            raise
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_MS}")
    return True


def _insert(conn: sqlite3.Connection, message: ParsedMessage) -> None:
    header = message.header
    cursor = conn.execute(
        "INSERT INTO messages(thread_id, offset, length, date_ts, sender, recipients, subject,"
        " labels, hidden, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (message.thread_id, message.offset, message.length,
         header.date.timestamp() if header.date else None, header.sender,
         header.recipients, header.subject, json.dumps(list(header.labels)),
         int(bool(HIDDEN_LABELS & set(header.labels))), header.message_id),
    )
    conn.execute(
        "INSERT INTO message_text(rowid, header, body) VALUES (?, ?, ?)",
        (cursor.lastrowid, f"{header.subject}\n{header.sender}\n{header.recipients}",
         message.body),
    )


def _digests(path: Path, end: int) -> tuple[str, str]:
    """sha256 of the first and the last DIGEST_BYTES of ``path``'s first ``end`` bytes."""
    with path.open("rb") as handle:
        head = handle.read(min(DIGEST_BYTES, end))
        handle.seek(max(end - DIGEST_BYTES, 0))
        tail = handle.read(min(DIGEST_BYTES, end))
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()

"""The persistent index: one SQLite file in the adapter's workdir.

Tables: ``notes`` (one row per indexed file: stat, content hash, title, front
matter), ``chunks`` (line ranges and headings), ``chunk_text`` (FTS5 over each
chunk's title and body, keyed by the chunk's rowid), ``identifiers`` (paths,
names, aliases and ids a query may name exactly), ``failures`` (files that
could not be indexed, and why), ``declined`` (files the settings keep out, and
why), ``dirs`` (each folder's mtime when it was last listed, so a cheap check
can tell which folders gained or lost entries) and ``meta`` (format, root,
settings digest, watermark, generation, whether the first build finished). The file is a cache: when it is unreadable, from
another format, or built for another folder or settings, it is rebuilt.

Each thread gets its own connection (the SDK runs handlers in worker
threads); writers serialize on ``write_lock``; WAL lets readers proceed. Processes
sharing the file (two commands started at once, each with its adapter) check,
delete and create it one at a time, under a lock on its folder.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from adapter_sdk.lexical import STEMMED_FTS5_TOKENIZER
from adapter_sdk.workdir import exclusive, held_elsewhere

FORMAT = "notes-fts5/6"
TITLE_WEIGHT = 2.0
BODY_WEIGHT = 1.0
BUSY_TIMEOUT_MS = 5000  # how long a statement waits on another connection's lock
BULK_CHECKPOINT_PAGES = 16384  # 64 MB of WAL between checkpoints during a large run
# A first build's page cache. Past a few thousand notes the index's B-trees outgrow
# SQLite's default 2 MiB, and every insert re-reads their pages from the file: a first
# build of 100k notes took 48-49 s with the default, 40-45 s with this (paired runs).
BUILD_CACHE_KIB = 32 << 10
_CORRUPTION_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}

SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    stem TEXT NOT NULL,
    project TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    title TEXT NOT NULL,
    front TEXT NOT NULL,
    has_supersedes INTEGER NOT NULL,
    has_problems INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    decode_problem TEXT NOT NULL
);
CREATE INDEX notes_stem ON notes(stem);
CREATE INDEX notes_mtime ON notes(mtime_ns);
CREATE INDEX notes_superseding ON notes(path) WHERE has_supersedes = 1;
CREATE INDEX notes_front_problems ON notes(path) WHERE has_problems = 1;
CREATE INDEX notes_decode_problems ON notes(path) WHERE decode_problem != '';
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    preview TEXT NOT NULL
);
CREATE INDEX chunks_note ON chunks(note_id, ordinal);
CREATE VIRTUAL TABLE chunk_text USING fts5(
    title, body, tokenize = "{STEMMED_FTS5_TOKENIZER}"
);
INSERT INTO chunk_text(chunk_text, rank) VALUES ('rank', 'bm25({TITLE_WEIGHT}, {BODY_WEIGHT})');
CREATE TABLE identifiers(key TEXT NOT NULL, note_id INTEGER NOT NULL, kind TEXT NOT NULL);
CREATE INDEX identifiers_key ON identifiers(key);
CREATE INDEX identifiers_note ON identifiers(note_id);
CREATE TABLE failures(
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE declined(
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,
    reason TEXT NOT NULL,
    fix TEXT NOT NULL
);
CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL);
"""  # committed with the identity rows (``_create``), so no reader sees half a schema
# How many chunks hold a stemmed term, per index generation: the IDF inputs a search
# counted (``fts5vocab`` walks a common term's whole posting list, 40-130 ms at 100k
# notes), kept so later processes reading the same generation need not count again.
# Created on open, so an index of an earlier release gains it without a rebuild.
TERM_COUNTS = """CREATE TABLE IF NOT EXISTS term_chunks(
    generation TEXT NOT NULL, term TEXT NOT NULL, chunks INTEGER NOT NULL,
    PRIMARY KEY (generation, term)
) WITHOUT ROWID"""

# Every chunk added or removed, journaled in the transaction that changes it, for the
# ranker (``ranker.py``) to apply. Created on open, like ``TERM_COUNTS``.
JOURNAL = (
    "CREATE TABLE IF NOT EXISTS rank_journal("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS rank_chunk_added AFTER INSERT ON chunks "
    "BEGIN INSERT INTO rank_journal(chunk_id) VALUES (new.id); END",
    "CREATE TRIGGER IF NOT EXISTS rank_chunk_removed AFTER DELETE ON chunks "
    "BEGIN INSERT INTO rank_journal(chunk_id) VALUES (old.id); END",
)


class IndexWriteError(Exception):
    """The index could not be written (the disk is full, or the file is read-only); the
    transaction was rolled back, so the index still holds its last committed state."""


def is_corruption(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and (
        getattr(exc, "sqlite_errorcode", None) in _CORRUPTION_CODES
        or "malformed" in str(exc)
        or "not a database" in str(exc)
    )


class Store:
    def __init__(self, path: str, root: str, settings_digest: str) -> None:
        self.path = path
        self.identity = {"format": FORMAT, "root": root, "settings": settings_digest}
        self.write_lock = threading.RLock()
        self._local = threading.local()
        self._epoch = 0
        self.rebuilt_reason: str | None = None
        self.writable = False

    def open(self) -> None:
        """Open the index, starting afresh when it is corrupt or was built differently."""
        with self.write_lock:
            with self._exclusive():
                try:
                    reason = self._mismatch()
                except sqlite3.DatabaseError as exc:
                    reason = f"index file was unreadable ({exc}); rebuilt"
                if reason is not None:
                    self._create(reason)
            self._add_caches()

    def start_afresh(self, reason: str) -> None:
        """Replace the index with an empty one (it was found corrupt): the catch-up fills it."""
        with self.write_lock:
            with self._exclusive():
                self._create(reason)
            self._add_caches()

    def _add_caches(self) -> None:
        """Tables and triggers added since the format began, so an older index gains them."""
        try:
            self.conn().execute(TERM_COUNTS)
            for statement in JOURNAL:
                self.conn().execute(statement)
            self._keep_row_counts()
            self.writable = True
        except sqlite3.OperationalError as exc:
            # a read-only index: searches count each time; one another process is writing
            # (busy) is writable, and its counts are kept by the next write
            self.writable = held_elsewhere(exc)
        except IndexWriteError:  # refused by the disk
            self.writable = False

    def _create(self, reason: str) -> None:
        self.discard()
        conn = self.conn()
        conn.executescript(SCHEMA)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", self.identity.items())
        conn.execute("COMMIT")
        self.rebuilt_reason = reason

    def _exclusive(self) -> AbstractContextManager[None]:
        """Held while the file is checked, deleted or created (see ``adapter_sdk.workdir``)."""
        return exclusive(os.path.dirname(os.path.abspath(self.path)))

    def _keep_row_counts(self) -> None:
        """Count the rows of an index written before the writer kept its counts, once, so
        no search counts them (``row_counts``)."""
        if self.meta("chunk_rows"):
            return
        with self.transaction() as conn:
            notes, chunks = row_counts(conn)
            conn.executemany(
                "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                [("note_rows", str(notes)), ("chunk_rows", str(chunks))],
            )

    def kept_term_counts(self, generation: str, terms: list[str]) -> dict[str, int]:
        """The chunk counts of ``terms`` some search kept for ``generation``."""
        if not self.writable:
            return {}
        marks = ",".join("?" * len(terms))
        rows = self.conn().execute(
            f"SELECT term, chunks FROM term_chunks WHERE generation = ? AND term IN ({marks})",
            [generation, *terms],
        )
        return dict(rows.fetchall())

    def keep_term_counts(self, generation: str, counts: dict[str, int]) -> None:
        """Keep what a search counted for ``generation``, dropping other generations'.
        Only a cache: skipped, never waited for, while the index is being written."""
        if not self.writable or not self.write_lock.acquire(blocking=False):
            return
        conn = self.conn()
        try:
            conn.execute("PRAGMA busy_timeout=0")
            with self.transaction():
                conn.execute("DELETE FROM term_chunks WHERE generation != ?", (generation,))
                conn.executemany(
                    "INSERT OR IGNORE INTO term_chunks VALUES (?, ?, ?)",
                    [(generation, term, chunks) for term, chunks in counts.items()],
                )
        except (sqlite3.Error, IndexWriteError):
            pass
        finally:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self.write_lock.release()

    def _mismatch(self) -> str | None:
        if not os.path.exists(self.path):
            return "no index yet"
        conn = self.conn()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            return "index file held no notes index; rebuilt"
        stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        for key, value in self.identity.items():
            if stored.get(key) != value:
                return f"index {key} changed; rebuilt"
        return None

    def discard(self) -> None:
        """Delete the index file (and its WAL); every thread reconnects afterwards."""
        with self.write_lock:
            self._close_local()
            self._epoch += 1
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(self.path + suffix)
                except FileNotFoundError:
                    pass

    def conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "conn", None) is None or local.epoch != self._epoch:
            self._close_local()
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            local.conn, local.epoch = conn, self._epoch
        return local.conn  # type: ignore[no-any-return]

    def _close_local(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. SQLite rolls some failures back by itself (a full disk
        among them), so the rollback here runs only if one is still open; a write the
        disk refused is raised as :class:`IndexWriteError` naming the index file."""
        with self.write_lock:
            conn = self.conn()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                refused = _refused_write(exc)
                if refused is None:
                    raise
                raise IndexWriteError(f"{refused} at {self.path}") from exc

    @contextmanager
    def bulk(self, *, first_build: bool = False) -> Iterator[None]:
        """Write a large run of batches without waiting on the disk: no sync per
        checkpoint and fewer, larger checkpoints, on this thread's connection; a first
        build also gets a page cache the index's B-trees fit in, given back when it ends
        (a resident adapter's later bulk edits keep the default, and their memory). A
        killed process loses nothing committed (the writes are in the operating system's
        hands); a machine that loses power mid-run may leave a file that fails its check,
        which is rebuilt like any corrupt index."""
        conn = self.conn()
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute(f"PRAGMA wal_autocheckpoint={BULK_CHECKPOINT_PAGES}")
        previous_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        if first_build:
            conn.execute(f"PRAGMA cache_size=-{BUILD_CACHE_KIB}")
        try:
            yield
        finally:
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=1000")
            conn.execute(f"PRAGMA cache_size={previous_cache}")  # its pages are freed

    def meta(self, key: str, default: str = "") -> str:
        row = self.conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self.write_lock:
            self.conn().execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        """Fold the WAL back into the file unless a write is under way, then close this
        thread's connection (each thread closes its own: closing one another thread is
        using is not safe). A checkpoint waits for every writer, and the catch-up may be
        in the middle of a batch (a command ending while the first build runs waited
        1.4 s for it): then the WAL is left for the next process to fold."""
        try:
            conn = self.conn()
            conn.execute("PRAGMA busy_timeout=0")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
        self._close_local()


def row_counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """How many notes and chunks the index holds: kept in ``meta`` by every batch that
    changes them (``sync``; counting 550,000 chunks costs up to 0.2 s on a cold cache), and
    counted once for an index written before it kept them."""
    kept = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('note_rows', 'chunk_rows')").fetchall())
    if len(kept) == 2:
        return int(kept["note_rows"]), int(kept["chunk_rows"])
    return (
        int(conn.execute("SELECT count(*) FROM notes").fetchone()[0]),
        int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0]),
    )


def _refused_write(exc: sqlite3.OperationalError) -> str | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc):
        return "disk full"
    if code == sqlite3.SQLITE_READONLY or "readonly database" in str(exc):
        return "index file is read-only"
    return None

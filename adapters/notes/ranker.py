"""A second index over the chunks, so a large folder's common words are ranked
without scoring every chunk that holds them.

FTS5 computes BM25 for every chunk an expression admits: three topic words in a
folder of 100,000 notes admit 32,000 chunks, about 200 ms. Tantivy's block-max
WAND skips the chunks that cannot reach the candidate pool (9 ms for the same
question). The SQLite index stays the truth; this one is derived from it and may
be deleted at any time:

* a trigger journals every chunk added to or removed from ``chunks``, in the
  transaction that changes it (``rank_journal``);
* the ranker drops each journaled chunk and adds it again if it still exists, and
  commits with a marker document naming the last journal entry applied, so the
  marker and the documents change together;
* a search ranks with it only when it has applied every journaled change and the
  SQLite file is the one it was built from (``epoch``); otherwise FTS5 ranks and
  the diagnostics say why. It never answers from an older state than FTS5 would.

A first build reads the chunks in id order and commits every ``BUILD_BATCH``, so
a stopped build resumes; changes made meanwhile are journaled and applied after.
Only a process that does index work builds it (``recall refresh``, or an adapter
kept warm by a resident broker); any process applies a short journal. One process
at a time writes it (the workdir's ``rank-work`` lease): a build creates the folder
afresh, which would pull another process's build out from under it.

It matches with an analyzer of its own (Unicode words, lowercased, ASCII-folded,
English Snowball stems), which conflates nearly, not exactly, the spellings FTS5's
Porter stemmer does, and its BM25 normalizes length per field. So it is used from
``MIN_CHUNKS`` chunks up, where FTS5 slows down (setting ``ranker``); below that
FTS5 answers in a few milliseconds.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adapter_sdk.workdir import lease
from adapters.notes.store import row_counts

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import tantivy

    from adapters.notes.store import Store

RANKER_DIR = "notes-rank"
MIN_CHUNKS = 20_000
BUILD_BATCH = 50_000  # chunks per commit of a first build
APPLY_BEFORE_SEARCH = 500  # journaled chunks a search applies itself rather than use FTS5
APPLY_BATCH = 10_000  # journal entries applied a commit
BUILD_HEAP = 128_000_000
APPLY_HEAP = 16_000_000
TITLE_BOOST = 2.0  # the title weighs as in FTS5 (``store.TITLE_WEIGHT``)
MAX_TOKEN_CHARS = 64  # as the query side's tokenizer (``adapter_sdk.lexical``)
PENDING_CHANGES = "changes not yet applied"
RANK_LEASE = "rank-work"
LEASE_POLL_S = 0.1  # between looks at whether another process still writes it
_MARKER_ID = 0  # chunk ids start at 1
_ANALYZER = "notes"


def tantivy_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("tantivy") is not None


def wanted(mode: str, chunks: int, built: bool) -> bool:
    """Whether a folder of ``chunks`` chunks is ranked by the ranker under the setting
    ``mode``; one ``built`` already is kept down to half the threshold, so a folder
    hovering about it does not build and delete it in turn."""
    if mode != "auto":
        return mode == "tantivy"
    return chunks >= (MIN_CHUNKS // 2 if built else MIN_CHUNKS)


def last_journaled(conn: sqlite3.Connection) -> int:
    """The sequence number of the latest journal entry ever written (0: none)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'rank_journal'").fetchone()
    return int(row[0]) if row else 0


def index_epoch(store: Store) -> str:
    """A token naming this SQLite file: a ranker built from another one is rebuilt."""
    epoch = store.meta("ranker_epoch")
    if not epoch:
        epoch = os.urandom(8).hex()
        with store.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('ranker_epoch', ?)", (epoch,))
        epoch = store.meta("ranker_epoch")
    return epoch


class RankerUnreadable(Exception):
    """The ranker's files could not be read (damaged, or deleted under it): FTS5 ranks."""


class Ranker:
    """The tantivy index in ``<workdir>/notes-rank``, kept up with the SQLite index."""

    def __init__(self, workdir: str, store: Store, index_busy: Callable[[], bool] = lambda: False) -> None:
        self.path = os.path.join(workdir, RANKER_DIR)
        self.store = store
        self.index_busy = index_busy  # whether the SQLite index is being written now
        # whether this process does index work (a refresh, or kept warm): it builds the
        # ranker and applies changes on its own thread; a short-lived one only applies a
        # change in a search (``apply_now``)
        self.may_build = False
        self.error: str | None = None  # why the last catch-up failed, if it did
        self._index: tantivy.Index | None = None
        self._work = threading.Lock()  # one catch-up at a time in this process
        self._cond = threading.Condition()
        self._wanted = False
        self._running = False  # the ranker's thread took the wanted catch-up and runs it
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- searching -----------------------------------------------------------------

    def current(self, conn: sqlite3.Connection) -> str | None:
        """None when the ranker holds exactly what the SQLite index does; else why not."""
        try:
            return self._current(conn)
        except (ValueError, OSError) as exc:
            self._unreadable(exc)
            return "unreadable"

    def _unreadable(self, exc: Exception) -> None:
        self._index = None
        self.error = f"the ranker could not be read ({exc}); index work builds it again"

    def _current(self, conn: sqlite3.Connection) -> str | None:
        index = self._opened()
        if index is None:
            return "unreadable" if self.exists() and self.error else "not built"
        marker = _marker(index)
        if marker is None or marker["built_to"] != -1:
            return "first build under way"
        if marker["epoch"] != self.store.meta("ranker_epoch"):
            return "built from another index file"
        if last_journaled(conn) > marker["seq"]:
            index.reload()  # another process may have applied them
            marker = _marker(index)
            if marker is None or last_journaled(conn) > marker["seq"]:
                return PENDING_CHANGES
        if _out_of_step(index, conn):
            return "out of step with the index"
        return None

    def pool(self, expression: str, size: int) -> list[tuple[int, float]]:
        """(chunk id, rank) of the best ``size`` chunks ``expression`` (FTS5 syntax of
        quoted terms, AND, OR and parentheses, which tantivy parses alike) admits; the
        rank is the negated score, so lower is better as with FTS5's."""
        index = self._opened()
        if index is None:
            raise RankerUnreadable("the ranker was deleted")
        try:
            searcher = index.searcher()
            query = index.parse_query(expression, ["title", "body"], field_boosts={"title": TITLE_BOOST})
            hits = searcher.search(query, size, count=False).hits
            ids = searcher.fast_field_values("id", [address for _, address in hits])
        except (ValueError, OSError) as exc:
            self._unreadable(exc)
            raise RankerUnreadable(str(self.error)) from None
        return [
            (chunk_id, -float(score))
            for (score, _), chunk_id in zip(hits, ids, strict=True)
            if isinstance(chunk_id, int)
        ]

    # -- keeping up ------------------------------------------------------------------

    def nudge(self) -> None:
        """Apply what the SQLite index journaled, on the ranker's own thread."""
        with self._cond:
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="notes-ranker", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no catch-up is wanted or running; whether that happened in time."""
        end = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while self._wanted or self._running or self._work.locked():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))  # the lock is let go outside the condition
            return True

    def wait_unleased(self, timeout: float) -> bool:
        """Wait until no process writes the ranker (another process building it, say);
        whether that happened in time."""
        end = time.monotonic() + max(timeout, 0.0)
        while True:
            with self._lease() as held:
                if held:
                    return True
            if time.monotonic() >= end:
                return False
            time.sleep(LEASE_POLL_S)

    def apply_now(self, conn: sqlite3.Connection, at_most: int, wait: float) -> None:
        """Apply a journal of at most ``at_most`` entries on this thread, waiting up to
        ``wait`` seconds for a catch-up already applying it. For a process that does no
        index work: it leaves soon, and until a resident adapter or a refresh applied the
        change, every later process would rank with FTS5 (200 ms for common words at
        100k notes, against 30 ms to apply a note)."""
        if not self._work.acquire(timeout=wait):
            return
        try:
            with self._lease() as held:
                index = self._opened() if held else None
                marker = _marker(index) if index is not None else None
                if index is None or marker is None or marker["built_to"] != -1:
                    return
                if 0 < last_journaled(conn) - marker["seq"] <= at_most:
                    self._apply(index, conn, marker)
        except (ValueError, OSError, sqlite3.Error) as exc:
            if "LockBusy" not in str(exc):
                self.error = f"ranker update failed: {exc}"
        finally:
            self._work.release()

    def catch_up(self) -> None:
        """Build the ranker, resume its build, or apply the journal (index work: the
        ranker's own thread runs it). A search applying a change, or the journal being
        trimmed, is waited for: a catch-up given up then would leave a refresh that asked
        for the ranker answering complete without it."""
        self._work.acquire()
        try:
            with self._lease() as held:
                if not held:  # another process is building or updating it
                    return
                self.error = None  # what this catch-up finds wrong is said again
                self._catch_up()
        except ValueError as exc:
            if "LockBusy" not in str(exc):  # another process is updating it: no failure
                self.error = f"ranker update failed: {exc}"
        except (OSError, sqlite3.Error) as exc:
            self.error = f"ranker update failed: {exc}"
        finally:
            self._work.release()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._wanted or self._stopping):
                    self._cond.wait()
                if self._stopping:
                    return
                # taken and running in one step: between them a waiter would see no
                # catch-up wanted and none holding the lock yet, and leave too soon
                self._wanted, self._running = False, True
            try:
                self.catch_up()
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()

    def _catch_up(self) -> None:
        conn = self.store.conn()
        epoch = index_epoch(self.store)
        index = self._opened()
        try:
            marker = _marker(index) if index is not None else None
        except (ValueError, OSError):
            marker = None  # damaged: built again
        if marker is not None and marker["epoch"] != epoch:
            marker = None
        if (
            marker is not None and marker["built_to"] == -1 and marker["seq"] == last_journaled(conn)
            and index is not None and _out_of_step(index, conn)
        ):
            marker = None  # it lost step with the index somehow: built again
        if marker is None or marker["built_to"] != -1:
            if marker is None:
                index = self._create()
                marker = {"seq": last_journaled(conn), "built_to": 0, "epoch": epoch}
            assert index is not None
            self._build(index, conn, marker)
            marker = _marker(index)
            if marker is None or marker["built_to"] != -1:
                return  # stopped part-way: the journal waits for the rest of the build
        assert index is not None
        if last_journaled(conn) > marker["seq"]:
            self._apply(index, conn, marker)

    def _build(self, index: tantivy.Index, conn: sqlite3.Connection, marker: dict[str, Any]) -> None:
        import tantivy

        writer = index.writer(BUILD_HEAP, 2)
        try:
            start = int(marker["built_to"])
            while True:
                rows = conn.execute(
                    "SELECT rowid, title, body FROM chunk_text WHERE rowid > ? ORDER BY rowid LIMIT ?",
                    (start, BUILD_BATCH),
                ).fetchall()
                for chunk_id, title, body in rows:
                    writer.add_document(tantivy.Document(id=chunk_id, title=title, body=body))
                done = len(rows) < BUILD_BATCH
                start = rows[-1][0] if rows else start
                _set_marker(writer, {**marker, "built_to": -1 if done else start})
                writer.commit()
                if done or self._stopping:
                    break
            writer.wait_merging_threads()
        except BaseException:
            writer.rollback()
            raise
        index.reload()
        with self.store.transaction() as write:  # entries before the build began are in it
            write.execute("DELETE FROM rank_journal WHERE seq <= ?", (marker["seq"],))

    def _apply(self, index: tantivy.Index, conn: sqlite3.Connection, marker: dict[str, Any]) -> None:
        """Apply the journal, ``APPLY_BATCH`` entries a commit, stopping between commits
        when the SQLite index is being written again (it is applied once that rests)."""
        while True:
            entries = conn.execute(
                "SELECT seq, chunk_id FROM rank_journal WHERE seq > ? ORDER BY seq LIMIT ?",
                (marker["seq"], APPLY_BATCH),
            ).fetchall()
            if not entries:
                return
            marker = {**marker, "seq": entries[-1][0]}
            self._commit_changes(index, conn, sorted({chunk for _, chunk in entries}), marker)
            with self.store.transaction() as write:
                write.execute("DELETE FROM rank_journal WHERE seq <= ?", (marker["seq"],))
            if len(entries) < APPLY_BATCH or self._stopping or self.index_busy():
                return

    def _commit_changes(
        self, index: tantivy.Index, conn: sqlite3.Connection, changed: list[int], marker: dict[str, Any]
    ) -> None:
        """Drop the ``changed`` chunks, add back those the index still holds, and commit
        with ``marker``."""
        import tantivy

        writer = index.writer(APPLY_HEAP, 1)
        try:
            for chunk_id in changed:
                writer.delete_documents_by_term("id", chunk_id)
            for start in range(0, len(changed), 500):
                ids = changed[start : start + 500]
                marks = ",".join("?" * len(ids))
                for chunk_id, title, body in conn.execute(
                    f"SELECT rowid, title, body FROM chunk_text WHERE rowid IN ({marks})", ids
                ):
                    writer.add_document(tantivy.Document(id=chunk_id, title=title, body=body))
            _set_marker(writer, marker)
            writer.commit()
            if self.may_build:  # a short-lived process leaves the merging to index work
                writer.wait_merging_threads()
        except BaseException:
            writer.rollback()
            raise
        index.reload()

    # -- the tantivy index ---------------------------------------------------------

    def forget(self) -> None:
        """Delete the ranker (the folder is too small for it, or it is switched off), and
        the journal, which only a ranker on disk has a use for."""
        with self._work, self._lease() as held:
            if not held:  # another process is writing it: it judges the same way
                return
            if self.exists():
                import shutil

                self._index = None
                shutil.rmtree(self.path, ignore_errors=True)
            self._trim_journal()

    def forget_journal(self) -> None:
        """Drop the journal while no ranker is on disk (its first build reads every chunk).
        A ranker being written now, or built since the caller looked, keeps it."""
        if not self._work.acquire(blocking=False):
            return  # a build or an apply is under way: the journal is its to drop
        try:
            with self._lease() as held:
                if held and not self.exists():
                    self._trim_journal()
        finally:
            self._work.release()

    def _lease(self) -> AbstractContextManager[bool]:
        return lease(os.path.dirname(self.path), RANK_LEASE)

    def _trim_journal(self) -> None:
        """Drop the whole journal: with no ranker on disk, a first build reads every chunk."""
        if self.store.conn().execute("SELECT 1 FROM rank_journal LIMIT 1").fetchone():
            with self.store.transaction() as conn:
                conn.execute("DELETE FROM rank_journal")

    def exists(self) -> bool:
        return os.path.isdir(self.path)

    def open(self) -> None:
        """Open the index now (a few milliseconds), if it was built, rather than in the
        first search."""
        self._opened()

    def _opened(self) -> tantivy.Index | None:
        if self._index is None and os.path.exists(os.path.join(self.path, "meta.json")):
            import tantivy

            try:
                index = tantivy.Index.open(self.path)
                index.register_tokenizer(_ANALYZER, _analyzer())
                index.config_reader("Manual")
                index.searcher()  # opens every segment: a lost file shows here
                self._index = index
            except (OSError, ValueError) as exc:
                self._unreadable(exc)
        return self._index

    def _create(self) -> tantivy.Index:
        import shutil

        import tantivy

        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path)
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("title", stored=False, tokenizer_name=_ANALYZER)
        builder.add_text_field("body", stored=False, tokenizer_name=_ANALYZER)
        builder.add_integer_field("id", indexed=True, fast=True)
        builder.add_text_field("marker", stored=True, tokenizer_name="raw")
        index = tantivy.Index(builder.build(), path=self.path)
        index.register_tokenizer(_ANALYZER, _analyzer())
        index.config_reader("Manual")
        self._index = index
        return index


def _analyzer() -> tantivy.TextAnalyzer:
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS + 1))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _out_of_step(index: tantivy.Index, conn: sqlite3.Connection) -> bool:
    """Whether the ranker holds another number of chunks than the index (its marker aside)."""
    return bool(index.searcher().num_docs - 1 != row_counts(conn)[1])


def _marker(index: tantivy.Index) -> dict[str, Any] | None:
    """The marker document of the index's latest commit: the journal entry applied last
    (``seq``), the chunk id a first build reached (``built_to``, -1 once complete) and
    the ``epoch`` of the SQLite file it reflects."""
    import json

    import tantivy

    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.term_query(index.schema, "id", _MARKER_ID), 1, count=False).hits
    if not hits:
        return None
    stored = searcher.doc(hits[0][1])["marker"]
    return json.loads(stored[0]) if stored else None


def _set_marker(writer: tantivy.IndexWriter, marker: dict[str, Any]) -> None:
    import json

    import tantivy

    writer.delete_documents_by_term("id", _MARKER_ID)
    writer.add_document(tantivy.Document(id=_MARKER_ID, marker=json.dumps(marker, sort_keys=True)))

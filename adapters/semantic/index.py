"""The vector index: one embedding per note chunk, kept in the adapter's workdir.

Notes are chunked exactly as the notes adapter chunks them
(``adapter_sdk.markdown.chunking``), so a chunk here and the lexical source's chunk
share a locator. Embeddings are stored in SQLite keyed by the SHA-256 of the
chunk's text (float16 blobs), so an unchanged chunk is never embedded twice,
across edits, renames and rebuilds. ``build`` re-scans the folder, embeds only
the chunks the store lacks (``prepare`` finds them without model work,
``embed`` embeds them, meant for a background thread), and swaps in the new
in-memory matrix when done; searches read whatever matrix was swapped in last.
One process at a time embeds into a store (its ``embed-work`` lease): another
one waits, then embeds only what the first left, rather than the same chunks again.

The store also remembers each note's chunks (lines, title, preview, embedding
key) with the size and modification time it had when chunked, so a re-scan
reads and parses only the notes that changed: at 10,000 notes, re-chunking
every note is seconds of CPU at each adapter start. A note chunked too soon
after its last write (``adapter_sdk.folder.scan.settled``) is read again regardless,
as the notes index does: it may have been rewritten since without its stat changing.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import operator
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from adapter_sdk.folder.scan import scan
from adapter_sdk.folder.selection import FolderSelection
from adapter_sdk.markdown.chunking import indexable, parse_note
from adapter_sdk.workdir import lease
from adapters.semantic import served_file
from adapters.semantic.encoders import DEFAULT_MODEL, TextEncoder, encoder_class, load
from adapters.semantic.freshness import Watermark
from adapters.semantic.indexed_chunk import IndexedChunk
from adapters.semantic.served_file import NoteStat

if TYPE_CHECKING:
    import numpy as np

STORE_EVERY = 256  # chunks embedded between writes to the store: a killed build keeps them
EMBED_LEASE = "embed-work"
LEASE_RETRY_S = 0.5  # between tries while another process embeds into the store
SCAN_ABOVE = 2_000  # keys read at once past which one pass over every stored vector is faster
# (13,500 keys: 0.05 s against 0.16-0.22 s looked up 500 at a time)


@dataclass(frozen=True)
class Snapshot:
    chunks: Sequence[IndexedChunk]
    keys: Sequence[str]  # each chunk's embedding key
    matrix: np.ndarray  # one unit row per chunk, float32
    complete: bool
    built_at: float
    files: int
    notes: dict[str, NoteStat]  # the notes it was built from, as they were read
    mapped: bool = False  # read from the served file at a cold start, not rebuilt


@dataclass
class Pending:
    """A scan's chunks, their store keys, the embeddings already stored, and the text of
    each chunk read from its note in this scan (by position; a chunk known from the store
    has none, and is never missing, since its note is re-read when any of its keys is)."""

    chunks: list[IndexedChunk]
    texts: dict[int, str]
    keys: list[str]
    vectors: dict[str, bytes]
    notes: dict[str, NoteStat] = field(default_factory=dict)
    # chunks of notes unchanged since the snapshot served was built: position -> its row there
    reused: dict[int, int] = field(default_factory=dict)
    reused_from: np.ndarray | None = None  # that snapshot's matrix

    @property
    def missing(self) -> list[int]:
        return [i for i, key in enumerate(self.keys) if i not in self.reused and key not in self.vectors]


class _Remembered(NamedTuple):
    """A note as the store remembers it: as it was when read and chunked, and its chunks
    as (start line, end line, title, preview, embedding key)."""

    note: NoteStat
    chunks: list[tuple[Any, ...]]


def _same_rows(current: Snapshot, pending: Pending) -> bool:
    """Whether ``pending`` holds ``current``'s chunks and keys, in order; compared item by
    item, stopping at the first that differs, without copying a mapped snapshot's keys."""
    return (len(current.keys) == len(pending.keys)
            and all(map(operator.eq, current.keys, pending.keys))
            and all(map(operator.eq, current.chunks, pending.chunks)))


class VectorIndex:
    def __init__(
        self, root: str, store_dir: str, model: str = DEFAULT_MODEL,
        encoder_factory: Callable[[], TextEncoder] | None = None, resident: bool = False,
    ) -> None:
        """``resident``: the index serves many searches (a long-lived broker's adapter), so a
        snapshot mapped from the served file is copied into memory, where a search's pass
        over the matrix is about three times faster than through the mapping."""
        self.root = root
        self.resident = resident
        self.model = model
        kind = encoder_class(model)
        self.model_key: str = kind.key
        self.dimensions: int = kind.dimensions
        # the notes a store remembers are the folder's as chunked for one model: their
        # embedding keys name it, so another model sharing the store keeps its own
        self._notes_root = f"{root}\n{self.model_key}"
        self.path = Path(store_dir) / "embeddings.sqlite3"
        folder_key = hashlib.sha256(self._notes_root.encode()).hexdigest()[:16]
        self.served_path = Path(store_dir) / f"served-{folder_key}.npy"  # ``served_file.py``
        self._saved: Snapshot | None = None  # the snapshot the served file holds, when known
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._encoder_factory = encoder_factory
        self._encoder: TextEncoder | None = None
        self._encoder_lock = threading.Lock()
        self._lock = threading.Lock()
        self._save_lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self.last_error: str | None = None
        self.elsewhere = False  # another process is embedding into the store; this one waits
        self.watermark: Watermark | None = None  # the folder as the last scan found it
        self.scanned_from = 0.0  # time.time() at which the last completed scan started
        self.scan_settings = FolderSelection()  # which files are notes, as the notes source's defaults
        self.pending = 0  # chunks the last scan found that are not embedded yet
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings(key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
            )
            conn.execute(  # a store may serve several folders and models: notes are keyed by both
                "CREATE TABLE IF NOT EXISTS chunked_notes(root TEXT NOT NULL, path TEXT NOT NULL,"
                " size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, checked_ns INTEGER NOT NULL,"
                " sha256 TEXT NOT NULL,"
                " chunks TEXT NOT NULL, PRIMARY KEY (root, path))"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One commit for many rows: without it every row of an ``executemany`` is a
        transaction of its own, and a disk sync (30 s for the chunks of 10,000 notes)."""
        with self._connect() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def encoder(self) -> TextEncoder:
        return self._loaded_encoder()

    def load_encoder(self) -> None:
        """Load the model now (waiting for a load already under way); raises why it cannot."""
        self._loaded_encoder()

    def encoder_within(self, seconds: float) -> TextEncoder | None:
        """The model, waiting at most ``seconds`` for a load under way (None: still loading,
        which the first load on a machine, preparing it, may be); a failed load raises."""
        if self._encoder is not None:
            return self._encoder
        if not self._encoder_lock.acquire(timeout=max(0.0, seconds)):
            return None
        self._encoder_lock.release()
        return self._loaded_encoder()

    def _loaded_encoder(self) -> TextEncoder:
        with self._encoder_lock:
            if self._encoder is None:
                self._encoder = self._encoder_factory() if self._encoder_factory else load(self.model)
            return self._encoder

    def load_encoder_in_background(self) -> None:
        """Start loading the model now, so that the first question finds it loaded or loading
        (a cold query's start reads the store meanwhile). A failure here is left for that
        question's own load to raise and report."""

        def load_quietly() -> None:
            with suppress(Exception):  # raised again, and reported, by the load a search makes
                self._loaded_encoder()

        # numpy first, on this thread: the model's packages import it too, and two threads
        # importing one package's dependencies at once can each hold a module the other needs
        importlib.import_module("numpy")
        threading.Thread(target=load_quietly, name="semantic-model-load", daemon=True).start()

    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    def embed_query(self, text: str) -> np.ndarray:
        vectors = self.encoder.encode([text])
        return vectors[0]

    def prepare(self) -> Pending | None:
        """Re-scan the folder. Nothing more when it holds exactly the notes served (or, at a
        cold start, those of the served file); else swap in a complete snapshot at once when
        every chunk is already embedded, or return the work left for ``embed`` (no model
        work happens here)."""
        started = time.time()
        try:
            scanned = self._scan()
            current = self._snapshot
            if (current is None and self._map_served(scanned.files)) or (
                current is not None and served_file.unchanged(current.notes, scanned.files)
            ):  # what is served is the folder as it is: no note to read, the store untouched
                self.scanned_from = started
                self.pending = 0
                return None
            pending = self._chunks(scanned)
        except (OSError, sqlite3.Error) as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        self.scanned_from = started
        self.pending = len(pending.missing)
        if self.pending:
            return pending
        self._swap(pending)
        return None

    def embed(self, pending: Pending) -> None:
        """Embed what ``pending`` lacks, storing each batch as it is done; never raises
        (``last_error`` says why it stopped). While another process embeds into the
        store this waits for it, then embeds what it left."""
        with self._lock:
            try:
                while True:
                    with lease(self.path.parent, EMBED_LEASE) as held:
                        if held:
                            if self.elsewhere:  # what the other process embedded is stored
                                pending = self._chunks()
                                self.pending = len(pending.missing)
                                self.elsewhere = False
                            self._embed_missing(pending)
                            return
                    self.elsewhere = True
                    time.sleep(LEASE_RETRY_S)
            except Exception as exc:  # reported through health and search
                self.last_error = f"{type(exc).__name__}: {exc}"

    def _embed_missing(self, pending: Pending) -> None:
        import numpy as np

        missing = sorted(pending.missing, key=lambda i: len(pending.texts[i]))
        for start in range(0, len(missing), STORE_EVERY):  # similar lengths pad least
            batch = missing[start : start + STORE_EVERY]
            encoded = self.encoder.encode([pending.texts[i] for i in batch])
            rows = [
                (pending.keys[i], encoded[n].astype(np.float16).tobytes())
                for n, i in enumerate(batch)
            ]
            with self._transaction() as conn:
                conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", rows)
            pending.vectors.update(rows)
            self.pending = max(0, self.pending - len(rows))
        self._swap(pending)
        self.last_error = None

    def _swap(self, pending: Pending) -> None:
        """Serve ``pending``'s chunks from now on; the snapshot served stays the same object
        while they are the same (a re-scan that found nothing new changes nothing)."""
        import numpy as np

        current = self._snapshot
        if current is not None and current.notes == pending.notes and _same_rows(current, pending):
            return

        matrix = np.empty((len(pending.keys), self.dimensions), dtype=np.float32)
        if pending.reused:
            matrix[list(pending.reused)] = np.asarray(pending.reused_from)[list(pending.reused.values())]
        read = [i for i in range(len(pending.keys)) if i not in pending.reused]
        if read:
            stacked = b"".join(pending.vectors[pending.keys[i]] for i in read)  # one copy, not one per row
            matrix[read] = np.frombuffer(stacked, dtype=np.float16).reshape(len(read), self.dimensions)
        files = len({c.path for c in pending.chunks})
        self._snapshot = Snapshot(pending.chunks, pending.keys, matrix, True, time.time(), files, pending.notes)

    def _map_served(self, files: dict[str, Any]) -> bool:
        """Serve the saved snapshot when the folder is as it was built from (a cold start)."""
        import numpy as np

        served = served_file.read(
            self.served_path, model=self.model_key, root=self._notes_root, dimensions=self.dimensions, files=files,
        )
        if served is None:
            return False
        if self.resident:  # many searches and rescans to come: everything in this process's memory
            chunks: Sequence[IndexedChunk] = served.chunks.materialized()
            keys: Sequence[str] = served.keys.materialized()
            matrix = np.array(served.matrix)
        else:
            chunks, keys, matrix = served.chunks, served.keys, served.matrix
        with_chunks = len(set(served_file.chunk_paths(served.chunks)))  # notes counted as a rebuild counts them
        self._snapshot = self._saved = Snapshot(
            chunks, keys, matrix, True, served.built_at, with_chunks, served.notes, mapped=True,
        )
        return True

    def save_served(self) -> None:
        """Keep the snapshot served now in the served file, unless it already holds it;
        never raises (a store that cannot be written to only loses the fast start)."""
        snapshot = self._snapshot
        if snapshot is None or snapshot is self._saved:
            return
        with self._save_lock:
            try:
                served_file.write(
                    self.served_path, model=self.model_key, root=self._notes_root, built_at=snapshot.built_at,
                    notes=snapshot.notes, chunks=snapshot.chunks, keys=snapshot.keys, matrix=snapshot.matrix,
                )
            except OSError:
                return
            self._saved = snapshot

    def prune_replaced(self) -> int:
        """Remove the vectors no note of the store (of any folder or model) refers to any more:
        those of text since edited away or deleted. How many went; none while another build
        holds the store, whose new vectors its notes may not name yet."""
        with lease(self.path.parent, EMBED_LEASE) as held:
            if not held:
                return 0
            with self._transaction() as conn:
                named = {row[-1] for (rows,) in conn.execute("SELECT chunks FROM chunked_notes")
                         for row in orjson.loads(rows)}
                replaced = [(key,) for (key,) in conn.execute("SELECT key FROM embeddings") if key not in named]
                conn.executemany("DELETE FROM embeddings WHERE key = ?", replaced)
        return len(replaced)

    def _scan(self) -> Any:
        checked_ns = time.time_ns()
        scanned = scan(self.root, self.scan_settings)
        self.watermark = Watermark.of(self.root, scanned, checked_ns)
        return scanned

    def _chunks(self, scanned: Any = None) -> Pending:
        """Every note's chunks: from the snapshot served while the note is as it was when that
        was built, else from the store while the note's size and modification time are those
        it was chunked at and all its chunks are embedded, else read and parsed again (and
        remembered). So a rescan after one edit reads that note, not the whole store."""
        files = (scanned or self._scan()).files
        current = self._snapshot
        served = self._unchanged_rows(current, files) if current is not None else {}
        asked = None if current is None else [p for p in {*files, *current.notes} if p not in served]
        known = {
            path: _Remembered(NoteStat(size, mtime_ns, checked_ns, sha256), [tuple(row) for row in orjson.loads(rows)])
            for path, size, mtime_ns, checked_ns, sha256, rows in self._notes(asked)
        }
        unchanged = {
            path: remembered for path, remembered in known.items()
            if path in files and remembered.note.unchanged_at(files[path])
        }
        vectors = self._stored([key for remembered in unchanged.values() for *_, key in remembered.chunks])
        pending = Pending([], {}, [], vectors, reused_from=current.matrix if current is not None and served else None)
        parsed: list[tuple[str, int, int, int, str, str]] = []
        forgotten = [path for path in known if path not in files]
        for rel in sorted(files):
            rows = served.get(rel)
            if rows is not None and current is not None:
                for row in rows:
                    pending.reused[len(pending.chunks)] = row
                    pending.chunks.append(current.chunks[row])
                    pending.keys.append(current.keys[row])
                pending.notes[rel] = current.notes[rel]
                continue
            remembered = unchanged.get(rel)
            if remembered is not None and all(key in vectors for *_, key in remembered.chunks):
                for start, end, title, preview, key in remembered.chunks:
                    pending.chunks.append(IndexedChunk(rel, start, end, title, preview, remembered.note.sha256))
                    pending.keys.append(key)
                pending.notes[rel] = remembered.note
                continue
            checked_ns = time.time_ns()
            note = self._parse(rel, pending)
            if note is None:
                forgotten.append(rel)  # read again at every scan, while it stays as it is
            else:
                parsed.append((rel, files[rel].size, files[rel].mtime_ns, checked_ns, *note))
            digest = note[0] if note is not None else ""
            pending.notes[rel] = NoteStat(files[rel].size, files[rel].mtime_ns, checked_ns, digest)
        pending.vectors.update(self._stored([pending.keys[i] for i in pending.texts]))
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO chunked_notes VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(self._notes_root, *note) for note in parsed],
            )
            conn.executemany(
                "DELETE FROM chunked_notes WHERE root = ? AND path = ?",
                [(self._notes_root, path) for path in forgotten],
            )
        return pending

    def _parse(self, rel: str, pending: Pending) -> tuple[str, str] | None:
        """Append the note's chunks, keys and texts to ``pending``; the note's digest and its
        chunks as the store remembers them, or None when it cannot be read."""
        try:
            data = (Path(self.root) / rel).read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        digest = hashlib.sha256(data).hexdigest()
        rows = []
        for chunk in parse_note(rel, text).chunks:
            body = indexable(chunk.indexed_body).strip()
            if not body:  # a heading alone says what follows, not what is there
                continue
            embedded = f"{chunk.title}\n{body}"
            key = hashlib.sha256(f"{self.model_key}\n{embedded}".encode()).hexdigest()
            pending.texts[len(pending.chunks)] = embedded
            pending.chunks.append(
                IndexedChunk(rel, chunk.start_line, chunk.end_line, chunk.title, chunk.preview, digest)
            )
            pending.keys.append(key)
            rows.append((chunk.start_line, chunk.end_line, chunk.title, chunk.preview, key))
        return digest, json.dumps(rows)

    @staticmethod
    def _unchanged_rows(current: Snapshot, files: dict[str, Any]) -> dict[str, list[int]]:
        """The snapshot's rows of each note a scan (``files``) finds as it was when read."""
        rows: dict[str, list[int]] = {}
        for row, path in enumerate(served_file.chunk_paths(current.chunks)):
            rows.setdefault(path, []).append(row)
        return {
            path: rows.get(path, []) for path, note in current.notes.items()
            # a note that could not be read is read again
            if note.sha256 and path in files and note.unchanged_at(files[path])
        }

    def _notes(self, paths: list[str] | None = None) -> list[tuple[str, int, int, int, str, str]]:
        """The store's remembered notes of this folder: every one, or those of ``paths``."""
        query = "SELECT path, size, mtime_ns, checked_ns, sha256, chunks FROM chunked_notes WHERE root = ?"
        with self._connect() as conn:
            if paths is None:
                return conn.execute(query, (self._notes_root,)).fetchall()
            found = []
            for start in range(0, len(paths), 500):
                part = paths[start : start + 500]
                found += conn.execute(
                    f"{query} AND path IN ({','.join('?' * len(part))})", (self._notes_root, *part)
                ).fetchall()
            return found

    def _stored(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._connect() as conn:
            if len(keys) > SCAN_ABOVE:  # one pass in the table's order, not a B-tree seek per key
                wanted = set(keys)
                return {key: vector for key, vector in conn.execute("SELECT key, vector FROM embeddings")
                        if key in wanted}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(conn.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", part
                ).fetchall())
        return found

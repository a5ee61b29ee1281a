"""The vector index: one embedding per note chunk, kept in the adapter's workdir.

Notes are chunked exactly as the notes adapter chunks them
(``adapter_sdk.markdown.chunking``), so a chunk here and the lexical source's chunk
share a locator. Embeddings are stored in SQLite keyed by the SHA-256 of the
chunk's text (float16 blobs), so an unchanged chunk is never embedded twice,
across edits, renames and rebuilds. ``build`` re-scans the folder, embeds only
the chunks the store lacks (``prepare`` finds them without model work,
``embed`` embeds them, meant for a background thread), and swaps in the new
in-memory matrix when done; searches read whatever matrix was swapped in last.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from adapter_sdk.markdown.chunking import indexable, parse_note
from adapters.notes.scan import scan
from adapters.notes.settings import NotesSettings

if TYPE_CHECKING:
    import numpy as np

    from adapters.semantic.model import Encoder

STORE_EVERY = 256  # chunks embedded between writes to the store: a killed build keeps them
MODEL_KEY = "all-MiniLM-L6-v2/numpy-f32/mean-pool/l2/128"


@dataclass(frozen=True)
class IndexedChunk:
    path: str
    start_line: int
    end_line: int
    title: str
    preview: str
    sha256: str  # of the note's bytes when indexed


@dataclass(frozen=True)
class Snapshot:
    chunks: list[IndexedChunk]
    matrix: np.ndarray  # one unit row per chunk, float32
    complete: bool
    built_at: float
    files: int


@dataclass
class Pending:
    """A scan's chunks, their texts and store keys, and the embeddings already stored."""

    chunks: list[IndexedChunk]
    texts: list[str]
    keys: list[str]
    vectors: dict[str, bytes]

    @property
    def missing(self) -> list[int]:
        return [i for i, key in enumerate(self.keys) if key not in self.vectors]


class VectorIndex:
    def __init__(self, root: str, store_dir: str, encoder_factory: type[Encoder] | None = None) -> None:
        self.root = root
        self.path = Path(store_dir) / "embeddings.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._encoder_factory = encoder_factory
        self._encoder: Encoder | None = None
        self._encoder_lock = threading.Lock()
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self.last_error: str | None = None
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings(key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    @property
    def encoder(self) -> Encoder:
        with self._encoder_lock:
            if self._encoder is None:
                from adapters.semantic.model import Encoder

                self._encoder = (self._encoder_factory or Encoder)()
            return self._encoder

    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    def embed_query(self, text: str) -> np.ndarray:
        vectors = self.encoder.encode([text])
        return vectors[0]

    def prepare(self) -> Pending | None:
        """Re-scan the folder; swap in a complete snapshot at once when every chunk is already
        embedded, else return the work left for ``embed`` (no model work happens here)."""
        try:
            chunks, texts = self._chunks()
            keys = [hashlib.sha256(f"{MODEL_KEY}\n{t}".encode()).hexdigest() for t in texts]
            vectors = self._stored(keys)
        except (OSError, sqlite3.Error) as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        pending = Pending(chunks, texts, keys, vectors)
        if pending.missing:
            return pending
        self._swap(pending)
        return None

    def embed(self, pending: Pending) -> None:
        """Embed what ``pending`` lacks, storing each batch as it is done; never raises
        (``last_error`` says why it stopped)."""
        import numpy as np

        with self._lock:
            try:
                missing = sorted(pending.missing, key=lambda i: len(pending.texts[i]))
                for start in range(0, len(missing), STORE_EVERY):  # similar lengths pad least
                    batch = missing[start : start + STORE_EVERY]
                    encoded = self.encoder.encode([pending.texts[i] for i in batch])
                    rows = [
                        (pending.keys[i], encoded[n].astype(np.float16).tobytes())
                        for n, i in enumerate(batch)
                    ]
                    with self._connect() as conn:
                        conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", rows)
                    pending.vectors.update(rows)
                self._swap(pending)
                self.last_error = None
            except Exception as exc:  # reported through health and search
                self.last_error = f"{type(exc).__name__}: {exc}"

    def _swap(self, pending: Pending) -> None:
        import numpy as np

        matrix = np.zeros((len(pending.chunks), 384), dtype=np.float32)
        for n, key in enumerate(pending.keys):
            matrix[n] = np.frombuffer(pending.vectors[key], dtype=np.float16)
        files = len({c.path for c in pending.chunks})
        self._snapshot = Snapshot(pending.chunks, matrix, True, time.time(), files)

    def _chunks(self) -> tuple[list[IndexedChunk], list[str]]:
        settings = NotesSettings()
        chunks: list[IndexedChunk] = []
        texts: list[str] = []
        for rel in sorted(scan(self.root, settings).files):
            try:
                data = (Path(self.root) / rel).read_bytes()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            digest = hashlib.sha256(data).hexdigest()
            for chunk in parse_note(rel, text).chunks:
                body = indexable(chunk.indexed_body).strip()
                if not body:  # a heading alone says what follows, not what is there
                    continue
                chunks.append(
                    IndexedChunk(rel, chunk.start_line, chunk.end_line, chunk.title, chunk.preview, digest)
                )
                texts.append(f"{chunk.title}\n{body}")
        return chunks, texts

    def _stored(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._connect() as conn:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(conn.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", part
                ).fetchall())
        return found

"""The snapshot a search serves, kept in one file so that an adapter starting cold maps it.

Rebuilding the served snapshot from the store costs an adapter's start about half a
second at 10,000 notes (every note's remembered chunks decoded, 45,000 vectors selected
and stacked, then widened to float32). When the folder holds exactly the notes, at the
sizes and modification times, that a saved snapshot was built from, the start maps this
file instead: a few milliseconds, and the matrix's pages are shared with the page cache
rather than copied.

The file is a run of arrays in numpy's ``.npy`` format, never pickled objects: ``meta``
(UTF-8 JSON: the format's version, the model, the folder, when the snapshot was built,
and each note's path, size, modification time, when it was read, and digest), ``rows``
(int32, one per chunk: its note, first and last line), ``keys`` (each chunk's
embedding key), ``text_ends`` and ``texts`` (every chunk's title and preview, UTF-8,
end to end) and ``matrix`` (float32, one unit row per chunk). Everything but ``meta``
is mapped, not read. It is a cache: the store stays the truth, a file that does not
match the folder or does not parse is ignored, and deleting it costs the next cold
start its rebuild.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from adapter_sdk.folder.scan import FileStat, settled
from adapters.semantic.indexed_chunk import IndexedChunk

if TYPE_CHECKING:
    import numpy as np

VERSION = 1
_ARRAYS = ("rows", "keys", "text_ends", "texts", "matrix")


@dataclass(frozen=True)
class NoteStat:
    """A note as its chunks were read: the stat that says it is unchanged since, and its digest."""

    size: int
    mtime_ns: int
    checked_ns: int
    sha256: str

    def unchanged_at(self, stat: FileStat) -> bool:
        """Whether the note, found now at ``stat``, is as it was when read: the same size
        and modification time, read late enough after its last write that an unchanged
        stat means unchanged bytes."""
        return (stat.size, stat.mtime_ns) == (self.size, self.mtime_ns) and settled(self.mtime_ns, self.checked_ns)


class ServedChunks(Sequence[IndexedChunk]):
    """The chunks of a mapped snapshot, each made when it is asked for."""

    def __init__(self, notes: list[str], digests: list[str], rows: Any, text_ends: Any, texts: Any) -> None:
        self._notes = notes
        self._digests = digests
        self._rows = rows
        self._ends = text_ends
        self._texts = texts

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int) -> IndexedChunk:  # type: ignore[override]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        note, start, end = (int(v) for v in self._rows[i])
        title_from = int(self._ends[2 * i - 1]) if i else 0
        title_to, preview_to = int(self._ends[2 * i]), int(self._ends[2 * i + 1])
        return IndexedChunk(
            self._notes[note], start, end, self._text(title_from, title_to),
            self._text(title_to, preview_to), self._digests[note],
        )

    def __iter__(self) -> Iterator[IndexedChunk]:
        return iter(self.materialized())

    def paths(self) -> list[str]:
        return [self._notes[note] for note in self._rows[:, 0].tolist()]

    def materialized(self) -> list[IndexedChunk]:
        """Every chunk made at once (for an adapter that serves many searches)."""
        texts = bytes(self._texts)
        ends = [0, *self._ends.tolist()]
        return [
            IndexedChunk(self._notes[note], start, end, texts[ends[2 * i] : ends[2 * i + 1]].decode("utf-8"),
                         texts[ends[2 * i + 1] : ends[2 * i + 2]].decode("utf-8"), self._digests[note])
            for i, (note, start, end) in enumerate(self._rows.tolist())
        ]

    def _text(self, start: int, end: int) -> str:
        return bytes(self._texts[start:end]).decode("utf-8")


def chunk_paths(chunks: Sequence[IndexedChunk]) -> list[str]:
    """Each chunk's note, without making the chunks of a mapped snapshot."""
    if isinstance(chunks, ServedChunks):
        return chunks.paths()
    return [chunk.path for chunk in chunks]


class ServedKeys(Sequence[str]):
    def __init__(self, keys: Any) -> None:
        self._keys = keys

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return bytes(self._keys[i]).decode("ascii")

    def materialized(self) -> list[str]:
        return [key.decode("ascii") for key in self._keys.tolist()]


@dataclass(frozen=True)
class Served:
    chunks: ServedChunks
    keys: ServedKeys
    matrix: np.ndarray
    built_at: float
    notes: dict[str, NoteStat]


def write(
    path: Path, *, model: str, root: str, built_at: float, notes: Mapping[str, NoteStat],
    chunks: Sequence[IndexedChunk], keys: Sequence[str], matrix: np.ndarray,
) -> None:
    """Write the snapshot aside, then rename it into place: a reader never maps half a file."""
    import numpy as np

    names = sorted(notes)
    number = {name: n for n, name in enumerate(names)}
    rows = np.array([(number[c.path], c.start_line, c.end_line) for c in chunks], dtype=np.int32).reshape(-1, 3)
    texts = bytearray()
    ends = []
    for chunk in chunks:
        for text in (chunk.title, chunk.preview):
            texts += text.encode("utf-8")
            ends.append(len(texts))
    meta = {
        "version": VERSION, "model": model, "root": root, "built_at": built_at,
        "notes": [[name, *(getattr(notes[name], f) for f in ("size", "mtime_ns", "checked_ns", "sha256"))]
                  for name in names],
    }
    arrays = {
        "rows": rows,
        "keys": np.array([key.encode("ascii") for key in keys], dtype="S64").reshape(-1),
        "text_ends": np.array(ends, dtype=np.int64),
        "texts": np.frombuffer(bytes(texts), dtype=np.uint8),
        "matrix": np.ascontiguousarray(matrix, dtype=np.float32),
    }
    _remove_abandoned(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        with open(partial, "wb") as out:
            np.lib.format.write_array(out, np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8))
            for name in _ARRAYS:
                np.lib.format.write_array(out, arrays[name], allow_pickle=False)
        os.replace(partial, path)
    finally:
        with suppress(OSError):
            partial.unlink()


def _remove_abandoned(path: Path) -> None:
    """Remove what a writer killed mid-write left (named after its process, which is gone)."""
    for partial in path.parent.glob(f".{path.name}.*"):
        pid = partial.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not _running(int(pid)):
            with suppress(OSError):
                partial.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read(path: Path, *, model: str, root: str, dimensions: int, files: Mapping[str, FileStat]) -> Served | None:
    """The saved snapshot when it was built for this model and folder and the folder's notes
    (``files``, a scan's) are all exactly those it was built from; else None."""
    try:
        meta, arrays = _mapped(path)
        if meta.get("version") != VERSION or meta.get("model") != model or meta.get("root") != root:
            return None
        notes = {name: NoteStat(int(size), int(mtime), int(checked), str(digest))
                 for name, size, mtime, checked, digest in meta["notes"]}
        if not unchanged(notes, files):
            return None
        rows, keys, ends, texts, matrix = (arrays[name] for name in _ARRAYS)
        count = len(rows)
        if (rows.shape != (count, 3) or keys.shape != (count,) or ends.shape != (2 * count,)
                or matrix.shape != (count, dimensions)):
            return None
        if count and (rows[:, 0].min() < 0 or rows[:, 0].max() >= len(notes)
                      or ends.min() < 0 or ends.max() > len(texts) or (ends[1:] < ends[:-1]).any()):
            return None
        names = list(notes)
        chunks = ServedChunks(names, [notes[name].sha256 for name in names], rows, ends, texts)
        return Served(chunks, ServedKeys(keys), matrix, float(meta["built_at"]), notes)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def unchanged(notes: Mapping[str, NoteStat], files: Mapping[str, FileStat]) -> bool:
    """Whether a scan (``files``) finds exactly these notes, each as it was when read
    (:meth:`NoteStat.unchanged_at`)."""
    return notes.keys() == files.keys() and all(note.unchanged_at(files[name]) for name, note in notes.items())


_DTYPES = {"rows": "<i4", "keys": "|S64", "text_ends": "<i8", "texts": "|u1", "matrix": "<f4"}


def _mapped(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    import numpy as np

    arrays: dict[str, np.ndarray] = {}
    with open(path, "rb") as file:
        shape, dtype = _header(file)
        if dtype != np.dtype("|u1") or len(shape) != 1:
            raise ValueError("meta is not bytes")
        meta = json.loads(file.read(shape[0]).decode("utf-8"))
        for name in _ARRAYS:
            shape, dtype = _header(file)
            if dtype != np.dtype(_DTYPES[name]):
                raise ValueError(f"{name} has dtype {dtype}")
            offset = file.tell()
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            # a plain array over the mapping: a memmap's own indexing costs microseconds an item
            arrays[name] = (np.asarray(np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape))
                            if size else np.zeros(shape, dtype=dtype))
            file.seek(offset + size)
    return meta, arrays


def _header(file: BinaryIO) -> tuple[tuple[int, ...], Any]:
    import numpy as np

    version = np.lib.format.read_magic(file)
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, fortran_order, dtype = read_header(file)
    if fortran_order or dtype.hasobject:
        raise ValueError("not a plain C-ordered array")
    return shape, dtype

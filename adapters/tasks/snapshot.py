"""The cached view of the task store, so an unchanged store is never re-read.

Three tiers, cheapest first:

1. the (size, mtime_ns) of each data file equals the key of the snapshot held
   in memory or persisted in the workdir → that snapshot is used as is;
2. the key differs but the content hash of the data files equals the cached
   one (a touch, a rewrite with the same bytes) → the cached records are kept
   and the new key persisted;
3. otherwise the loader runs (``task export`` or the todo.txt parser) and the
   result is persisted, unless the files changed while it ran.

Beside the records the cache keeps each record's stems, under the name of the
analyzer that made them, so a new process does not stem every task again to
search them; stems made by another analyzer are made afresh and cached anew.

The cache is a rebuildable convenience: deleting it changes latency only.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from adapter_sdk import loading, log
from adapters.tasks.task_record import TaskRecord

CACHE_FORMAT = 2
CACHE_FILE = "tasks-snapshot.json"

FileKey = tuple[tuple[str, int, int] | tuple[str, None, None], ...]
# (file contents by name, seconds left) -> (records, unparsed line references)
Loader = Callable[[dict[str, bytes], float], tuple[list[TaskRecord], list[str]]]


@dataclass(frozen=True, slots=True)
class Stemming:
    """How a search derives each record's stems, so the cache can keep them."""

    of: Callable[[list[TaskRecord]], list[Any]]  # the records' stems, JSON-encodable, in order
    analyzer: str  # names how: stems cached under another name are made again
    fits: Callable[[Any, TaskRecord], bool]  # whether stems read back fit their record


@dataclass(frozen=True, slots=True)
class Snapshot:
    records: list[TaskRecord]
    watermark: str
    unparsed_lines: list[str]
    basis: str  # memory | cache | revalidated | loaded
    stems: list[Any]  # ``Stemming.of(records)``


class SnapshotStore:
    """``files`` are the store's data files; ``identity`` names the store and mode."""

    def __init__(
        self, files: list[Path], workdir: Path, identity: str, loader: Loader, stemming: Stemming
    ) -> None:
        self.files = files
        self.cache_path = workdir / CACHE_FILE
        self.identity = identity
        self.loader = loader
        self.stemming = stemming
        self.loads = 0
        self._lock = threading.Lock()
        self._key: FileKey | None = None
        self._snapshot: Snapshot | None = None

    def current(self, timeout: float) -> Snapshot:
        with self._lock:
            key = self._file_key()
            if self._snapshot is not None and key == self._key:
                return replace(self._snapshot, basis="memory")
            with loading():  # many objects, none of them garbage
                return self._load(key, timeout)

    def _load(self, key: FileKey, timeout: float) -> Snapshot:
        """The snapshot of the store whose files have ``key``, from the cache or the store."""
        cached = self._read_cache()
        if cached is not None and cached[0] == key:
            snapshot = cached[1]
            if cached[2]:  # stems by another analyzer: made again, and kept for the next process
                self._write_cache(key, snapshot)
            return self._keep(key, snapshot)
        contents = self._read_contents()
        watermark = content_watermark(contents)
        if cached is not None and cached[1].watermark == watermark:
            snapshot = replace(cached[1], basis="revalidated")
            self._write_cache(key, snapshot)
            return self._keep(key, snapshot)
        records, unparsed = self.loader(contents, timeout)
        self.loads += 1
        snapshot = Snapshot(records, watermark, unparsed, "loaded", self.stemming.of(records))
        if self._file_key() == key:
            self._write_cache(key, snapshot)
            return self._keep(key, snapshot)
        return snapshot  # the store changed under us: serve it, cache nothing

    def _keep(self, key: FileKey, snapshot: Snapshot) -> Snapshot:
        self._key, self._snapshot = key, snapshot
        return snapshot

    def _file_key(self) -> FileKey:
        key: list[tuple[str, int, int] | tuple[str, None, None]] = []
        for path in self.files:
            try:
                stat = path.stat()
            except FileNotFoundError:
                key.append((path.name, None, None))
            else:
                key.append((path.name, stat.st_size, stat.st_mtime_ns))
        return tuple(key)

    def _read_contents(self) -> dict[str, bytes]:
        contents = {}
        for path in self.files:
            try:
                contents[path.name] = path.read_bytes()
            except FileNotFoundError:
                continue
        return contents

    def _read_cache(self) -> tuple[FileKey, Snapshot, bool] | None:
        """The cached key and snapshot, and whether its stems were made again here;
        None when there is no cache, or one that cannot be used (rebuilt from the store)."""
        try:
            data = orjson.loads(self.cache_path.read_bytes())
            if data["format"] != CACHE_FORMAT or data["identity"] != self.identity:
                return None
            key: FileKey = tuple(tuple(entry) for entry in data["key"])  # type: ignore[misc]
            records = [TaskRecord.from_cache(item) for item in data["records"]]
            stems = data["stems"]
            restemmed = (
                data["analyzer"] != self.stemming.analyzer
                or not isinstance(stems, list)
                or len(stems) != len(records)
                or not all(map(self.stemming.fits, stems, records))
            )
            if restemmed:
                stems = self.stemming.of(records)
            snapshot = Snapshot(records, data["watermark"], data["unparsed_lines"], "cache", stems)
            return key, snapshot, restemmed
        except FileNotFoundError:
            return None
        except Exception as exc:  # a damaged cache, whatever it holds, is only rebuilt
            log(f"tasks: snapshot cache {self.cache_path} not used ({type(exc).__name__}: {exc}); rebuilt")
            return None

    def _write_cache(self, key: FileKey, snapshot: Snapshot) -> None:
        payload = {
            "format": CACHE_FORMAT,
            "identity": self.identity,
            "key": [list(entry) for entry in key],
            "watermark": snapshot.watermark,
            "unparsed_lines": snapshot.unparsed_lines,
            "records": [record.to_cache() for record in snapshot.records],
            "analyzer": self.stemming.analyzer,
            "stems": snapshot.stems,
        }
        staging = self.cache_path.with_name(f".{CACHE_FILE}.{os.getpid()}.tmp")
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            staging.write_bytes(orjson.dumps(payload))
            os.replace(staging, self.cache_path)
        except OSError as exc:
            log(f"tasks: snapshot cache not written to {self.cache_path}: {exc}")


def content_watermark(contents: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(contents):
        digest.update(name.encode() + b"\0" + str(len(contents[name])).encode() + b"\0")
        digest.update(contents[name])
    return f"sha256:{digest.hexdigest()[:16]}"


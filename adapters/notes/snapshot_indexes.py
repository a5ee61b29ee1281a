"""Indexes of the notes as committed: what ``as_of`` answers from in a git work tree.

A snapshot is the tree of one commit, restricted to the notes folder and read
through git (never the working files, so uncommitted edits are never part of
it). Each is indexed once, like the folder, into its own SQLite file
``snapshots/<commit>.sqlite3`` in the workdir, which also keeps the bytes of
every note so excerpts and expansion read exactly what was committed. A note's
modification time is the commit time of the last commit that changed it.
Snapshots are built in a staging file and renamed into place; the most recently
used ``KEEP`` are kept, older ones deleted.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from adapter_sdk.folder.scan import FileStat, addressable, excluded_dir, wanted
from adapters.notes.gitrepo import GitRepo
from adapters.notes.report import SyncReport
from adapters.notes.settings import NotesSettings
from adapters.notes.store import Store
from adapters.notes.sync import NoteBytes, index_notes

KEEP = 4
SNAPSHOT_DIR = "snapshots"
_FILES_TABLE = "CREATE TABLE snapshot_files(path TEXT PRIMARY KEY, data BLOB NOT NULL)"


@dataclass
class Snapshot:
    commit: str
    store: Store
    built: SyncReport | None  # the build this request paid for, None when it was reused

    @property
    def short(self) -> str:
        return self.commit[:12]

    def read_note(self, path: str) -> bytes | None:
        row = self.store.conn().execute(
            "SELECT data FROM snapshot_files WHERE path = ?", (path,)
        ).fetchone()
        return bytes(row[0]) if row else None


class Snapshots:
    def __init__(self, repo: GitRepo, workdir: str, root: str, settings: NotesSettings) -> None:
        self.repo = repo
        self.directory = os.path.join(workdir, SNAPSHOT_DIR)
        self.root = root
        self.settings = settings
        self._lock = threading.Lock()
        self._open: dict[str, Store] = {}

    def at(self, commit: str) -> Snapshot:
        """The snapshot of ``commit`` (a full id), built if it is not on disk yet."""
        with self._lock:
            store = self._open.get(commit)
            built: SyncReport | None = None
            if store is None:
                path = os.path.join(self.directory, f"{commit}.sqlite3")
                store = self._store(path, commit)
                complete = False
                if os.path.exists(path):
                    store.open()  # built for other settings, or unreadable: emptied, rebuilt below
                    complete = store.meta("commit") == commit
                if not complete:
                    store.discard()
                    built = self._build(commit, path)
                    store = self._store(path, commit)
                    self._prune(keep=path)
                self._open[commit] = store
            os.utime(store.path)  # most recently used survives pruning
            return Snapshot(commit, store, built)

    def named(self, short: str) -> Snapshot | None:
        """The snapshot a locator's abbreviated commit names: on disk, or rebuilt from git."""
        for path in glob.glob(os.path.join(glob.escape(self.directory), f"{short}*.sqlite3")):
            return self.at(os.path.basename(path).removesuffix(".sqlite3"))
        commit = self.repo.resolve(short)
        return self.at(commit) if commit else None

    def count(self) -> int:
        return len(glob.glob(os.path.join(glob.escape(self.directory), "*.sqlite3")))

    def _store(self, path: str, commit: str) -> Store:
        return Store(path, f"git:{commit} {self.root}", self.settings.digest)

    def _build(self, commit: str, path: str) -> SyncReport:
        os.makedirs(self.directory, exist_ok=True)
        staging = f"{path}.building-{os.getpid()}-{threading.get_ident()}"
        store = self._store(staging, commit)
        try:
            store.discard()
            store.open()
            notes, unaddressable = self._notes(commit)
            conn = store.conn()
            conn.execute(_FILES_TABLE)
            meta = {"generation": f"git-{commit[:12]}", "watermark": f"git:{commit[:12]}", "commit": commit}
            report = index_notes(store, self.settings, notes, unaddressable, meta)
            with store.transaction() as conn:
                conn.executemany(
                    "INSERT INTO snapshot_files VALUES (?, ?)",
                    [(n.path, n.data) for n in notes if n.data is not None],
                )
            conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file to rename
            store.close()
            os.replace(staging, path)
        except BaseException:
            store.discard()
            raise
        return report

    def _notes(self, commit: str) -> tuple[list[NoteBytes], list[str]]:
        entries = [e for e in self.repo.tree(commit) if self._is_note(e.path)]
        unaddressable = [e.path for e in entries if not addressable(e.path)]
        entries = [e for e in entries if addressable(e.path)]
        readable = [e for e in entries if e.size <= self.settings.max_file_bytes]
        contents = self.repo.blobs([e.oid for e in readable])
        changed = self.repo.last_changed(commit) if entries else {}
        fallback = self.repo.commit_time(commit) if entries else 0
        notes = []
        for entry in entries:
            mtime_ns = changed.get(entry.path, fallback) * 1_000_000_000
            data = contents.get(entry.oid) if entry.size <= self.settings.max_file_bytes else None
            notes.append(NoteBytes(entry.path, FileStat(entry.size, mtime_ns), data))
        return notes, unaddressable

    def _is_note(self, path: str) -> bool:
        *directories, name = path.split("/")
        if any(excluded_dir(d, self.settings) for d in directories):
            return False
        return wanted(path, name, self.settings)

    def _prune(self, keep: str) -> None:
        paths = glob.glob(os.path.join(glob.escape(self.directory), "*.sqlite3"))
        paths.sort(key=_used_at, reverse=True)
        for path in [p for p in paths if p != keep][KEEP - 1 :]:
            commit = os.path.basename(path).removesuffix(".sqlite3")
            store = self._open.pop(commit, None) or self._store(path, commit)
            store.discard()


def _used_at(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return time.time()


def snapshot_diagnostics(snapshot: Snapshot) -> dict[str, Any]:
    diagnostics: dict[str, Any] = {"snapshot_commit": snapshot.short, "snapshot_built": snapshot.built is not None}
    if snapshot.built is not None:
        diagnostics["snapshot_build_ms"] = round(snapshot.built.elapsed_ms, 1)
    return diagnostics

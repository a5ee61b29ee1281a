"""A case's fixture as a run sees it: the committed folder in place, checked after the run.

``${FIXTURE}`` names the case's own ``fixture/`` directory, not a copy, so an
adapter under test reads exactly what is committed, at the path it is
committed at (as the format's other implementation binds it). A fixture is
read-only to a case: :class:`FixtureState` records every entry's bytes before
the run, and :meth:`FixtureState.changes` names what a run added, removed or
rewrote, so an adapter that writes into its location fails the case instead
of silently editing the transcript. A case whose adapter must write there (a
database store whose server keeps its log and leases beside its data) says
so in its manifest (``writable_fixture``) and is handed a fresh copy.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

_READ_CHUNK = 1 << 20


@dataclass(frozen=True)
class FixtureState:
    """What a fixture tree holds: relative path -> a digest of its content (file, link or folder)."""

    root: Path
    entries: dict[str, str]

    @classmethod
    def read(cls, root: Path) -> FixtureState:
        return cls(root, _entries(root))

    def changes(self) -> list[str]:
        """Relative paths whose content differs now, added or removed ones included, in order."""
        now = _entries(self.root)
        return sorted(path for path in self.entries.keys() | now.keys() if self.entries.get(path) != now.get(path))


def _entries(root: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    if not root.is_dir():
        return entries
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        base = Path(folder)
        for name in dirs:
            path = base / name
            # a link to a folder is recorded by its target and not walked into
            entries[_relative(path, root)] = f"link:{os.readlink(path)}" if path.is_symlink() else "dir"
        for name in sorted(files):
            path = base / name
            entries[_relative(path, root)] = _digest(path)
    return entries


def _digest(path: Path) -> str:
    if path.is_symlink():
        return f"link:{os.readlink(path)}"
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_READ_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    return f"file:{digest.hexdigest()}"


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()

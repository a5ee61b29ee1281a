"""Whether the notes folder changed since the index last scanned it, in a few stats.

Checked before each search (an adapter serves the folder it embeds for as long as
it lives, a resident broker's included), so a note added or edited while it runs is
embedded, by the same rules as the notes source's cheap check: every folder the scan
listed is stat'ed (an added, removed or renamed note, an editor's atomic save, moves
its folder's mtime), and so are the ``RECENT_NOTES`` most recently modified notes (the
note edited in place a minute ago is the one likely edited again). An in-place edit of
an older note is caught by the next ``recall refresh``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from adapter_sdk.folder.scan import ScanResult, settled

RECENT_NOTES = 256


@dataclass(frozen=True)
class Watermark:
    root: str
    dirs: dict[str, int]  # folder ('' for the root) -> mtime when listed
    recent: dict[str, tuple[int, int]]  # note -> (size, mtime_ns) when listed
    unsettled: bool  # a note was listed so soon after a write that a rewrite could hide

    @classmethod
    def of(cls, root: str, scanned: ScanResult, checked_ns: int) -> Watermark:
        newest = sorted(scanned.files.items(), key=lambda item: item[1].mtime_ns, reverse=True)
        recent = {path: (stat.size, stat.mtime_ns) for path, stat in newest[:RECENT_NOTES]}
        unsettled = any(not settled(mtime_ns, checked_ns) for _, mtime_ns in recent.values())
        return cls(root, dict(scanned.dirs), recent, unsettled)

    def moved(self) -> bool:
        """Whether the folder may hold changes the index has not seen."""
        if self.unsettled:
            return True
        for folder, mtime_ns in self.dirs.items():
            try:
                if os.stat(os.path.join(self.root, folder)).st_mtime_ns != mtime_ns:
                    return True
            except OSError:
                return True
        for path, (size, mtime_ns) in self.recent.items():
            try:
                stat = os.stat(os.path.join(self.root, path))
            except OSError:
                return True
            if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns):
                return True
        return False

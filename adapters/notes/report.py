"""What one run of the catch-up did, as searches and health reports tell it.

Apart from :mod:`adapters.notes.sync`, which does the work, so a process that finds
its index current never imports the machinery that reads and chunks notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class SyncReport:
    """The counts of one run (or of the runs a search waited for, added together)."""

    full: bool = False
    files_scanned: int = 0
    files_read: int = 0
    files_reindexed: int = 0
    files_removed: int = 0
    files_failed: int = 0
    files_pending: int = 0  # left for a later sync when this one was stopped
    # of files_pending, notes whose stat is unchanged but was recorded too soon after a
    # write to be trusted: read again to be sure, after every real change
    rechecks_pending: int = 0
    files_prepared_apart: int = 0  # read and chunked by the worker process
    changed: bool = False
    complete: bool = True  # False when stopped before every change was applied
    elapsed_ms: float = 0.0
    skipped_dirs: list[str] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)

    def add(self, other: SyncReport) -> None:
        """Fold a later sync's counts into this one (a search that waited for two)."""
        self.files_scanned = max(self.files_scanned, other.files_scanned)  # one folder, listed twice
        self.files_read += other.files_read
        self.files_reindexed += other.files_reindexed
        self.files_removed += other.files_removed
        self.files_failed = other.files_failed
        self.files_pending = other.files_pending
        self.rechecks_pending = other.rechecks_pending
        self.changed |= other.changed
        self.complete = other.complete
        self.elapsed_ms += other.elapsed_ms

    def diagnostics(self) -> dict[str, object]:
        return {
            "sync_full": self.full,
            "files_scanned": self.files_scanned,
            "files_read": self.files_read,
            "files_reindexed": self.files_reindexed,
            "files_removed": self.files_removed,
            "sync_ms": round(self.elapsed_ms, 1),
        }


Progress = Callable[[SyncReport], None]

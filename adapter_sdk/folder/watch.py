"""Watch a folder of notes and hand each change, as it happens, to the adapter's
index work (a :class:`ChangeSink`): the notes adapter's catch-up thread, or the
semantic leg's rescans of the same folder.

Uses the operating system's notifications (inotify on Linux) through
``watchfiles``; imported only by an adapter a long-lived broker spawned (at once)
or one that has lived long enough to be worth watching for (an adapter started
for one query never pays for it). Once the watch is in place a sweep runs, so
a change made before it started is caught too; from the end of that sweep a
search needs no folder check at all. Until then searches check the folder as an
unwatched adapter's do, and do not wait for that sweep unless it finds notes to
read.
Each folder the scan enters is watched on its own (not the notifier's recursive
mode, which walks every file first). A change to something that is not a note (a
folder created, moved or removed) has the folders watched afresh and then swept,
since its contents are not named by the event; until that sweep ends, searches
check the folder again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Protocol

from adapter_sdk.folder.scan import excluded_dir, folders, wanted
from adapter_sdk.folder.selection import FolderSelection

DEBOUNCE_MS = 200
# The notifier sleeps this long between looks at what arrived (and at the stop event),
# so it bounds how soon a change is applied and is how often an idle watch wakes: at 5 ms
# an idle adapter woke 195 times a second and spent 1.4% of a CPU; at 25 ms, 40 times
# and 0.4%, and an append is seen by searches 50 ms after it (25 ms at 5), within the
# 100 ms a resident search may lag an edit.
STEP_MS = 25
POLL_MS = 500


class ChangeSink(Protocol):
    """Where the watch hands what changed (``adapters.notes.catchup.Catchup`` is one)."""

    @property
    def swept_from(self) -> float:
        """``time.time()`` at which the last completed sweep of the whole folder started."""
        ...

    def sweep(self, *, verify: bool = False) -> None:
        """Check the whole folder; ``verify``: no change is known, only make sure."""
        ...

    def enqueue(self, paths: list[str]) -> None:
        """Re-read (or forget) these notes, relative to the root."""
        ...


class Watcher:
    def __init__(self, root: str, settings: FolderSelection, catchup: ChangeSink,
                 known_dir: Callable[[str], bool]) -> None:
        self.root = os.path.realpath(root)
        self.settings = settings
        self.catchup = catchup
        self.known_dir = known_dir
        self.ready_at: float | None = None  # time.time() when the watch was in place
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def watching(self) -> bool:
        """The watch is in place and a sweep that started after it has completed."""
        return (
            self.ready_at is not None
            and self.error is None
            and self.catchup.swept_from >= self.ready_at
        )

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="folder-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        import time

        try:
            from watchfiles._rust_notify import RustNotify

            notify = self._notifier(RustNotify)
        except Exception as exc:  # no notifier here: the search keeps checking instead
            self.error = f"cannot watch the folder: {exc}"
            return
        verify = True  # the first sweep only makes sure; a later one follows a folder change
        try:
            while not self._stop.is_set():
                if notify is None:  # the folders changed: watch them as they are now
                    notify = self._notifier(RustNotify)
                if self.ready_at is None:
                    self.ready_at = time.time()
                    # after the watch is in place, so what changed before it is caught too
                    self.catchup.sweep(verify=verify)
                    verify = False
                changes = notify.watch(DEBOUNCE_MS, STEP_MS, POLL_MS, self._stop)
                if isinstance(changes, str):
                    if changes != "timeout":  # "stop" or "signal"
                        break
                    continue
                if self._apply({path for _, path in changes}):
                    notify.close()
                    notify, self.ready_at = None, None
        except Exception as exc:  # the watch broke: searches fall back to checking
            self.error = f"the folder watch stopped: {exc}"
        finally:
            if notify is not None:
                notify.close()

    def _notifier(self, notifier: Any) -> Any:
        """A notifier on each folder a scan enters, one inotify watch apiece. The
        notifier's own recursive mode walks every file under the root first, holding the
        interpreter's lock throughout: at 100k notes every search stalled for 455 ms."""
        # a folder gone between listing and watching is passed over: its going is an
        # event in the folder that held it
        return notifier(folders(self.root, self.settings), False, False, POLL_MS, False, True)

    def _apply(self, paths: set[str]) -> bool:
        """Hand the changed notes to the catch-up; True when a folder appeared, went or
        moved, so the folders are watched afresh (and then swept)."""
        notes: list[str] = []
        sweep = False
        for path in paths:
            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
            if rel == "." or rel.startswith("../"):
                continue
            parts = rel.split("/")
            if any(excluded_dir(part, self.settings) for part in parts[:-1]):
                continue
            if wanted(rel, parts[-1], self.settings) and not os.path.isdir(path):
                notes.append(rel)
            elif os.path.isdir(path) or self.known_dir(rel):
                sweep = not excluded_dir(parts[-1], self.settings) or sweep
        self.catchup.enqueue(notes)
        return sweep

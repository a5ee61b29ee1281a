"""Index work on a thread of its own, so no query deadline ever cuts it off.

Searches, the folder watcher and refresh hand work to one :class:`Catchup`: a
*sweep* (scan the whole folder, the first build or a re-check; ``full`` re-reads
every note) or a set of named paths that changed. The thread applies it with
:func:`sync`, committing in batches, and tells waiters how much is left after
every batch. A caller waits only as long as it chooses (:meth:`Catchup.wait`);
whatever it does not wait for carries on, and a process that exits mid-way
leaves its committed batches for the next one to resume from.

One process at a time does a folder's index work (the workdir's ``index-work``
lease): a second one finding it held, a ``recall refresh`` beside a resident broker
say, keeps its work queued and tries again shortly, rather than reading every note a
second time. Work the other took up only just now is likely short (a few changed
notes, a small folder's first build): a search waits for it, within its budget, as
for its own. Once the other has held it for ``ELSEWHERE_PATIENCE_S``, searches stop
waiting and answer from what it has committed.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from adapter_sdk.workdir import held_elsewhere, held_for, lease
from adapters.notes.report import SyncReport
from adapters.notes.settings import NotesSettings
from adapters.notes.store import IndexWriteError, Store, is_corruption

KEEP_RUNS = 32
BUSY_RETRY_S = 0.5  # between tries while another process holds the index for writing
# Another process's index work younger than this is waited for, and tried for this often.
ELSEWHERE_PATIENCE_S = 1.0
ELSEWHERE_RETRY_S = 0.05
INDEX_LEASE = "index-work"


@dataclass(frozen=True)
class Progress:
    """How much index work is outstanding right now."""

    pending: int  # files known to need (re)reading or forgetting
    rechecks: int  # of those, notes read again only to be sure their stat did not lie
    scanning: bool  # a sweep is listing the folder, so more may be found
    busy: bool
    error: str | None  # why the last run stopped short (e.g. the disk is full)
    elsewhere: bool = False  # the work waits for another process indexing this folder

    @property
    def idle(self) -> bool:
        return not self.busy and not self.scanning and self.pending == 0 and not self.elsewhere


class Catchup:
    def __init__(
        self, store: Store, root: str, settings: NotesSettings,
        after_run: Callable[[], None] | None = None,
    ) -> None:
        self.store, self.root, self.settings = store, root, settings
        self.after_run = after_run  # called on this thread once each run is over
        self.last_report: SyncReport | None = None
        self.runs_done = 0  # runs completed so far; a caller notes it to ask what came after
        self._done: list[tuple[int, SyncReport]] = []  # the latest completed runs, numbered
        self.last_error: str | None = None
        self.rebuilt_reason: str | None = None
        self.swept_from = 0.0  # time.time() at which the last completed sweep started
        self._cond = threading.Condition()
        self._paths: dict[str, bool] = {}  # queued path -> whether it is only a re-check
        self._dirs: dict[str, int] = {}
        self._sweep = False
        self._full = False
        self._sweep_verifies = False  # the queued sweep only re-checks a complete index
        self._verifying = False  # the running sweep does, and has found nothing to read yet
        self._busy = False
        self._scanning = False
        self._pending = self._rechecks = 0
        self._elsewhere = False
        self._elsewhere_since = 0.0  # time.monotonic() at which the other process took the work
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- handing work over ---------------------------------------------------------

    def sweep(self, full: bool = False, *, unless_running: bool = False, verify: bool = False) -> None:
        """Re-check the whole folder (``full``: re-read every note) as soon as possible;
        ``unless_running``: not if a run is under way (a first build already is a sweep).
        ``verify``: no change is known, the sweep only makes sure of it (the watcher's
        first), so until it finds a note to read nobody waits for it and the index counts
        as up to date, as after a cheap check."""
        with self._cond:
            if unless_running and self._busy:
                return
            self._sweep_verifies = verify and (self._sweep_verifies or not self._sweep)
            self._sweep = True
            self._full |= full
            self._start()
            self._cond.notify_all()

    def enqueue(
        self, paths: list[str], dirs: dict[str, int] | None = None, rechecks: list[str] | None = None,
    ) -> None:
        """Re-read (or forget) ``paths``, and read ``rechecks`` again: notes whose stat did
        not move but was recorded too soon after a write to be trusted (counted apart in
        the progress, as a running sweep counts them); then record ``dirs`` (folder ->
        mtime) as listed."""
        if not paths and not dirs and not rechecks:
            return
        named = {**dict.fromkeys(rechecks or [], True), **dict.fromkeys(paths, False)}
        with self._cond:
            self._paths = _queued(self._paths, named)
            self._dirs.update(dirs or {})
            self._start()
            self._cond.notify_all()

    def stop(self, wait: float = 0.0) -> None:
        """Stop after the batch under way. An idle thread ends at once, closing its
        connection first: that is waited for, up to ``wait`` seconds; a batch is not."""
        with self._cond:
            self._stopping = True
            idle = not self._busy
            self._cond.notify_all()
        if wait > 0 and idle and self._thread is not None:
            self._thread.join(wait)

    def wake(self) -> None:
        """Wake every waiter so it re-checks whether it still wants to wait."""
        with self._cond:
            self._cond.notify_all()

    # -- watching it ---------------------------------------------------------------

    def progress(self) -> Progress:
        with self._cond:
            return self._progress()

    def done_since(self, runs_done: int) -> SyncReport:
        """What the runs completed after ``runs_done`` did, folded into one report."""
        folded = SyncReport()
        with self._cond:
            later = [report for number, report in self._done if number > runs_done]
        for report in later:
            folded.add(report)
            folded.full |= report.full
            folded.skipped_dirs, folded.skipped_links = report.skipped_dirs, report.skipped_links
        return folded

    def wait(self, timeout: float, *, at_most: int | None = None,
             give_up: Callable[[], bool] | None = None) -> Progress:
        """Wait until the work is done, for at most ``timeout`` seconds; stop waiting at
        once when more than ``at_most`` files are known to have changed (not worth
        waiting for; re-checks of notes whose stat did not move are not counted, being
        quick and read last), when ``at_most`` is given and another process has been
        doing the work for ``ELSEWHERE_PATIENCE_S`` (how much it has left is not known
        here), or when ``give_up`` says so. Returns the progress then."""
        end = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while True:
                progress = self._progress()
                now = time.monotonic()
                left = end - now
                patience = self._elsewhere_since + ELSEWHERE_PATIENCE_S - now
                if (
                    progress.idle
                    or left <= 0
                    or (at_most is not None and progress.elsewhere and patience <= 0)
                    or (at_most is not None and not progress.scanning
                        and progress.pending - progress.rechecks > at_most)
                    or (give_up is not None and give_up())
                ):
                    return progress
                self._cond.wait(min(left, patience) if progress.elsewhere and at_most is not None else left)

    # -- the thread ----------------------------------------------------------------

    def _progress(self) -> Progress:
        pending = self._pending + len(self._paths)
        verifying = self._verifying and pending == 0 and not self._dirs
        queued = self._sweep and not self._busy and not self._sweep_verifies
        return Progress(
            pending=pending,
            rechecks=self._rechecks + sum(self._paths.values()),
            # a sweep queued behind a running one is not waited for: that one says how much is left
            scanning=not verifying and (self._scanning or queued),
            busy=self._busy and not verifying,
            error=self.last_error,
            elsewhere=self._elsewhere,
        )

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="notes-catchup", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._sweep or self._paths or self._dirs or self._stopping):
                    self._cond.wait()
                if self._stopping:
                    break
                sweep, full = self._sweep, self._full
                paths, dirs = dict(self._paths), dict(self._dirs)
                self._verifying = (
                    sweep and self._sweep_verifies and not paths and bool(self.store.meta("build_complete"))
                )
                self._sweep = self._full = self._sweep_verifies = False
                self._paths.clear()
                self._dirs.clear()
                self._busy, self._scanning = True, sweep
                # until the run has stat'ed them, its paths count as they were queued
                self._pending = 0 if sweep else len(paths)
                self._rechecks = 0 if sweep else sum(paths.values())
            started = time.time()
            report: SyncReport | None = None
            waiting = False
            try:
                with lease(self._workdir, INDEX_LEASE) as held:
                    with self._cond:
                        if not held and not self._elsewhere:
                            self._elsewhere_since = time.monotonic() - held_for(self._workdir, INDEX_LEASE)
                        self._elsewhere = not held
                    waiting = not held
                    if held:
                        report = self._run(sweep, full, list(paths), dirs)
                        self.last_report = report
                        self.last_error = None
                        if sweep and report.complete:
                            self.swept_from = started
            except IndexWriteError as exc:
                self.last_error = str(exc)
            except (OSError, sqlite3.Error) as exc:
                waiting = held_elsewhere(exc)
                if not waiting:
                    self.last_error = f"index update failed: {exc}"
            except Exception as exc:  # a bug: said in health, and the thread lives on
                self.last_error = f"index update failed: {type(exc).__name__}: {exc}"
            finally:
                with self._cond:
                    if waiting:  # the work waits its turn, still pending
                        self._requeue(sweep, full, paths, dirs)
                    self._busy = self._scanning = self._verifying = False
                    self._pending = self._rechecks = 0
                    self.runs_done += 1
                    if report is not None:
                        self._done = [*self._done[-(KEEP_RUNS - 1):], (self.runs_done, report)]
                    self._cond.notify_all()
            if waiting:
                self._pause(self._retry_after())
            if self.after_run is not None:
                try:
                    self.after_run()
                except (OSError, sqlite3.Error) as exc:  # said, and the thread lives on
                    self.last_error = f"index upkeep failed: {exc}"
        self.store.close()  # this thread's connection

    def _requeue(self, sweep: bool, full: bool, paths: dict[str, bool], dirs: dict[str, int]) -> None:
        """Queue a run's work again, ahead of what came in meanwhile (called holding the lock).
        Another process holds the index work, or held the index for writing longer than a
        statement waits: it is indexing the same folder (a 'recall refresh' beside a
        resident broker)."""
        self._sweep |= sweep
        self._full |= full
        self._paths = _queued(paths, self._paths)
        self._dirs = {**dirs, **self._dirs}

    @property
    def _workdir(self) -> str:
        return os.path.dirname(self.store.path)

    def _retry_after(self) -> float:
        """Soon while the work held elsewhere may be a short one a search waits for."""
        with self._cond:
            young = self._elsewhere and time.monotonic() - self._elsewhere_since < ELSEWHERE_PATIENCE_S
        return ELSEWHERE_RETRY_S if young else BUSY_RETRY_S

    def _pause(self, seconds: float) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._stopping, timeout=seconds)

    def _run(self, sweep: bool, full: bool, paths: list[str], dirs: dict[str, int]) -> SyncReport:
        try:
            return self._sync(sweep, full, paths, dirs)
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            self.rebuilt_reason = f"index file was corrupt ({exc}); rebuilt"
            self.store.start_afresh(self.rebuilt_reason)
            return self._sync(True, True, [], {})

    def _sync(self, sweep: bool, full: bool, paths: list[str], dirs: dict[str, int]) -> SyncReport:
        from adapters.notes.sync import sync  # only a process with index work to do loads it

        only = None if sweep else paths
        report = sync(
            self.store, self.root, self.settings, full=full, only=only,
            should_stop=lambda: self._stopping, progress=self._advanced,
        )
        if not sweep and dirs and report.complete:
            with self.store.transaction() as conn:
                conn.executemany("INSERT OR REPLACE INTO dirs VALUES (?, ?)", dirs.items())
        return report

    def _advanced(self, report: SyncReport) -> None:
        with self._cond:
            self._scanning = False
            self._pending, self._rechecks = report.files_pending, report.rechecks_pending
            self.last_report = report
            self._cond.notify_all()


def _queued(first: dict[str, bool], then: dict[str, bool]) -> dict[str, bool]:
    """The paths of ``first`` and then ``then``, each mapped to whether it is only a
    re-check: a path queued as a change in either is a change."""
    merged = dict(first)
    for path, recheck in then.items():
        merged[path] = recheck and merged.get(path, True)
    return merged

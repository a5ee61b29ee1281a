"""The notes adapter: a folder of markdown and text notes behind protocol v1.

The index is a persistent SQLite FTS5 file in the workdir; from 20,000 chunks
up a tantivy index beside it ranks the candidates, but only while it holds
exactly what the SQLite index does (``ranker.py``). The handshake
answers at once; building and catching up run on a thread of their own
(``catchup.py``), committed in batches, so a first build resumes where a
stopped one left off and no query deadline ever cuts index work short. A
search first learns what changed (the watcher's events when the folder is
watched, else a cheap check, ``freshness.py``), waits for the catch-up only
while little is pending, and otherwise answers from what is indexed with
outcome ``partial`` and a reason saying how much is pending. The freshness a
search had is in its diagnostics and in health. Searches run in parallel,
each on its own connection; one whose caller gave up is interrupted.
A location that does not exist is not refused at the
handshake (the folder may live on a drive that is not mounted yet): the
source reports health ``unavailable`` and each search fails with
source_unavailable, both naming the folder. A handshake without any location
is refused with -32602. A corrupt index file is discarded and rebuilt.

``as_of``: when the folder is the root of a git work tree (or the setting
``git_snapshots`` says to look for one above it) the manifest declares
``snapshot`` and a search with ``as_of`` answers from the notes as committed in
the last commit at or before that instant on HEAD's history (``committed.py``);
elsewhere, or when git cannot be run (health says why), notes modified after
the instant are filtered out. The git modules are imported only then.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    Cancellation,
    CheckpointProgress,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    RefreshParams,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    current_cancellation,
    long_lived,
)
from adapter_sdk.folder.watch import Watcher
from adapters.notes.catchup import Catchup, Progress
from adapters.notes.committed import CommittedNotes, committed_notes
from adapters.notes.evidence import LiveNotes
from adapters.notes.freshness import describe, partial_reason, quick_check, unwatched_guess
from adapters.notes.index_problems import (
    SAMPLE,
    file_problems,
    supersedes_issues,
    table_count,
    unresolved_warning,
)
from adapters.notes.manifest import index_config, notes_manifest
from adapters.notes.ranker import Ranker, tantivy_installed
from adapters.notes.ranker_upkeep import RankerUpkeep
from adapters.notes.report import SyncReport
from adapters.notes.search import SearchContext, run_search
from adapters.notes.settings import NotesSettings, parse_settings
from adapters.notes.store import Store, is_corruption, row_counts

INDEX_FILE = "notes-index.sqlite3"
# a search waits for the catch-up only while at most this many files are pending
WAIT_FOR_AT_MOST = 256
# of the time left before a deadline, kept for answering / the share a wait may use
ANSWER_RESERVE_S = 0.25
WAIT_SHARE = 0.5
STOP_WAIT_S = 0.2  # how long shutting down waits for the catch-up thread to end
# an adapter alive this long is kept warm by its broker, so watching the folder pays (one
# a long-lived broker spawned watches at once)
WATCH_AFTER_S = 5.0
# a search in such an adapter waits at most this long for its watch's first sweep, so
# that the first queries after a broker starts can answer from a watched folder
WAIT_FOR_WATCH_S = 1.5
WATCH_POLL_S = 0.02
T = TypeVar("T")


class NotesAdapter(Adapter):
    def __init__(self) -> None:
        self.root = self.real_root = ""
        self.workdir = ""
        self.source_id = ""
        self.settings = NotesSettings()
        self.store: Store | None = None
        self.catchup: Catchup | None = None
        self.watcher: Watcher | None = None
        self.ranking: RankerUpkeep | None = None  # None: FTS5 ranks (tantivy is not installed)
        self.last_success_at: datetime | None = None
        self.committed: CommittedNotes | None = None  # in a git work tree: what as_of reads
        self.snapshot_unavailable: str | None = None  # why as_of filters in a git work tree
        self.long_lived = False  # spawned by a broker that keeps it warm (adapter_sdk.residence)

    # -- handshake -----------------------------------------------------------------

    def initialize(self, params: InitializeParams) -> Manifest:
        self.settings = parse_settings(params.settings)
        if not params.location:
            raise RpcError(
                ErrorCode.invalid_params,
                "the notes adapter needs a location: the folder holding the notes",
            )
        location = os.path.expanduser(params.location)
        if not os.path.isabs(location):
            location = os.path.join(params.base_dir or os.getcwd(), location)
        self.root = os.path.normpath(location)
        self.real_root = os.path.realpath(self.root)  # what every read is checked against
        self.workdir = params.workdir
        self.source_id = params.source_id
        try:
            os.makedirs(params.workdir, exist_ok=True)
        except OSError as exc:
            raise RpcError(
                ErrorCode.invalid_params, f"cannot create workdir {params.workdir}: {exc.strerror}"
            ) from None
        self.shutdown()  # a repeated handshake starts over
        self.store = Store(
            os.path.join(params.workdir, INDEX_FILE), self.real_root, self.settings.digest
        )
        self.store.open()
        self.committed = self.snapshot_unavailable = self.watcher = None
        self.long_lived = long_lived()
        # a read-only index journals nothing, so it is ranked by FTS5 alone
        self.catchup = Catchup(self.store, self.root, self.settings, after_run=self._rank_upkeep)
        catchup = self.catchup
        self.ranking = RankerUpkeep(
            Ranker(params.workdir, self.store, index_busy=lambda: not catchup.progress().idle),
            self.store, catchup, self.settings.ranker,
        ) if self.store.writable and tantivy_installed() else None
        available = self._unavailable_reason() is None
        if available and not self.store.meta("build_complete"):
            self.catchup.sweep()  # the first build (or the rest of a stopped one) starts now
        elif available and self.ranking is not None and self.ranking.wanted():
            # opened here rather than by the first search: a cold command greets its
            # adapter at launch, and this runs while the broker is still importing itself
            self.ranking.ranker.open()
        if available and self.long_lived and self.settings.watch:
            self._watch()  # its first answers are partial until the watch and its sweep are done
        if available:
            timer = threading.Timer(WATCH_AFTER_S, self._warm)
            timer.daemon = True
            timer.start()
        if available:
            self.committed, self.snapshot_unavailable = committed_notes(
                self.root, self.workdir, self.settings, self.store
            )
        return notes_manifest(git_snapshots=self.committed is not None)

    # -- search ------------------------------------------------------------------------

    def search(self, params: SearchParams) -> SearchResult:
        wanted = params.filters.record_types
        if wanted is not None and "document" not in wanted:
            return SearchResult(
                candidates=[],
                outcome=SearchOutcome.skipped,
                reason=AdapterSkipReason.record_type_mismatch,
                diagnostics={"record_types": ["document"]},
            )
        self._require_available()
        store = self._store()
        if params.as_of is not None and self.committed is not None:
            return self.committed.search(params, params.as_of, self.source_id)
        cancellation = current_cancellation()
        self._await_watch(params.deadline)
        freshness, report, progress = self._settle(params.deadline, check=True)
        guess = self._unwatched_guess(freshness["mode"])
        complete = progress.idle and self._count("failures") == 0 and guess is None
        candidates, diagnostics, stale = self._answer(params, cancellation, complete)
        if stale:  # a returned note changed since it was indexed: index it, then answer again
            self._catchup().enqueue(sorted(stale))
            checked, again, progress = self._settle(params.deadline, check=False)
            freshness = {**checked, "mode": freshness["mode"]}  # what the folder check was
            report.add(again)
            complete = progress.idle and self._count("failures") == 0 and guess is None
            candidates, diagnostics, stale = self._answer(params, cancellation, complete)
        self.last_success_at = datetime.now(UTC)
        notes, chunks = row_counts(store.conn())  # what was searched: a build commits batch by batch
        diagnostics.update(
            generation=store.meta("generation"),
            indexed_count=notes,
            chunk_count=chunks,
            freshness=freshness,
            **report.diagnostics(),
        )
        failed = self._count("failures")
        if failed:
            diagnostics["failed_count"] = failed
        declined = self._count("declined")
        if declined:
            diagnostics["declined_count"] = declined
        if failed or declined:  # named as health names them, each with its reason and fix
            problems = file_problems(store.conn())
            diagnostics.update({key: problems[key] for key in ("failures", "declined") if key in problems})
        reason = self._partial_reason(progress, failed, stale) or guess
        if reason is not None:
            diagnostics["detail"] = reason[1]
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if reason else SearchOutcome.success,
            reason=reason[0] if reason else None,
            diagnostics=diagnostics,
            source_watermark=store.meta("watermark") or None,
        )

    def _answer(
        self, params: SearchParams, cancellation: Cancellation, complete: bool
    ) -> tuple[list[Any], dict[str, Any], set[str]]:
        """Candidates from the index as it is, and the returned notes whose bytes no
        longer match the indexed revision (changed, gone, or now outside the folder)."""
        store = self._store()
        read: dict[str, bytes | None] = {}

        live = self._live_notes()

        def read_note(path: str) -> bytes | None:
            read[path] = live.read_or_none(path)
            return read[path]

        def answer() -> tuple[list[Any], dict[str, Any]]:
            ranker, not_ranking = self.ranking.for_search() if self.ranking is not None else (None, None)
            context = SearchContext(
                source_id=self.source_id,
                observed_at=datetime.now(UTC),
                complete=complete,
                generation=store.meta("generation"),
                read_note=read_note,
                term_counts=store,
                ranker=ranker,
                discount_quotations=self.settings.examples_quote_queries,
            )
            conn = store.conn()
            forget = cancellation.on_cancel(conn.interrupt)
            try:
                candidates, diagnostics = run_search(conn, params, context)
                if not_ranking:
                    diagnostics["ranker_unused"] = not_ranking
                if ranker is not None and ranker.may_build and diagnostics.get("ranker_unused"):
                    ranker.nudge()  # it could not be read: index work builds it again
                return candidates, diagnostics
            except sqlite3.OperationalError as exc:
                if cancellation.requested:
                    raise RpcError(ErrorCode.deadline_exceeded, "search cancelled") from None
                raise exc
            finally:
                forget()

        candidates, diagnostics = self._recovering(answer)
        indexed = self._indexed_hashes(list(read))
        stale = {
            path for path, data in read.items()
            if data is None or hashlib.sha256(data).hexdigest() != indexed.get(path)
        }
        return candidates, diagnostics, stale

    def _rank_upkeep(self) -> None:
        """After index work: bring the ranker up to date, or delete it when the folder
        is ranked by FTS5."""
        if self.ranking is not None:
            self.ranking.after_index_work()

    def _settle(self, deadline: datetime, check: bool) -> tuple[dict[str, Any], SyncReport, Progress]:
        """Learn what changed (unless the folder is watched), hand it to the catch-up, and
        wait for it while little is pending. Returns the freshness this gives an answer
        read from the index now, what the catch-up did meanwhile, and what is left."""
        catchup = self._catchup()
        store = self._store()
        cancellation = current_cancellation()
        checked_at = datetime.now(UTC)
        watched = self.watcher is not None and self.watcher.watching
        mode = "watched" if watched else "checked"  # without a check: what the last one was
        runs_done = catchup.runs_done
        if check and not store.meta("build_complete"):
            mode = "building"
            catchup.sweep(unless_running=True)  # the first build goes on, or resumes
        elif check and not watched:
            found = quick_check(store.conn(), self.root, self.settings, int(store.meta("note_count", "0")))
            mode = "swept" if found.sweep else "checked"
            if found.sweep:
                catchup.sweep()
            catchup.enqueue(found.paths, found.dirs, found.rechecks)
        forget = cancellation.on_cancel(catchup.wake)
        try:
            progress = catchup.wait(
                _wait_budget(deadline), at_most=WAIT_FOR_AT_MOST, give_up=lambda: cancellation.requested
            )
        finally:
            forget()
        if cancellation.requested:
            raise RpcError(ErrorCode.deadline_exceeded, "search cancelled")
        report = catchup.done_since(runs_done)
        if mode == "building" and store.meta("build_complete"):
            mode = "swept"  # the build, a sweep of the whole folder, finished meanwhile
        elif mode == "checked" and self.watcher is not None and self.watcher.watching:
            mode = "watched"  # the watch's first sweep finished meanwhile
        if catchup.rebuilt_reason:
            store.rebuilt_reason = catchup.rebuilt_reason
        freshness = describe(mode, checked_at, progress.pending, store.meta("swept_ns"))
        return freshness, report, progress

    def _await_watch(self, deadline: datetime) -> None:
        """Wait while this adapter's watch is being put in place and its first sweep runs
        (``WAIT_FOR_WATCH_S`` at most, within the deadline's waiting share): a sweep of a
        few thousand notes takes well under a second, and an answer after it is complete
        where one before it could only be partial (``_unwatched_guess``)."""
        watcher = self.watcher
        if not self.long_lived or watcher is None or watcher.watching:
            return  # an adapter started for a command answers complete on its cheap check
        if not self._store().meta("build_complete"):
            return
        cancellation = current_cancellation()
        stop = time.monotonic() + min(WAIT_FOR_WATCH_S, _wait_budget(deadline))
        while (not watcher.watching and watcher.error is None and not cancellation.requested
               and time.monotonic() < stop):
            time.sleep(WATCH_POLL_S)

    def _unwatched_guess(self, mode: str) -> tuple[str, str] | None:
        """Why an answer from a cheap check is partial, in an adapter a long-lived broker
        spawned to watch the folder (``freshness.unwatched_guess``). A command run once
        never lives to watch: it has the cheap check's guarantee, as has a user who turned
        the watch off; the manifest's freshness policy states it, and the answer's
        freshness mode (``checked``) says it was all there was."""
        if not (self.long_lived and self.settings.watch):
            return None
        return unwatched_guess(mode, self.watcher.error if self.watcher is not None else None)

    # -- expand --------------------------------------------------------------------------

    def expand(self, params: ExpandParams) -> ExpandResult:
        from adapter_sdk.folder.expand import parse_local, render  # not needed to search

        local = params.locator.split(":", 1)[1]
        where = parse_local(local)
        self._require_available()
        if where.commit is not None:
            if self.committed is None:
                raise RpcError(
                    ErrorCode.locator_expired,
                    f"{params.locator}: names commit {where.commit}, but the notes folder is not "
                    "in a git repository git can read now; search again",
                )
            section = self.committed.section(params.locator, where)
            return render(section, where, params.detail, params.budget_bytes)
        store = self._store()
        self._catchup().wait(_wait_budget(params.deadline), at_most=WAIT_FOR_AT_MOST)

        live = self._live_notes()
        section = self._recovering(lambda: live.section(store.conn(), params.locator, where))
        return render(section, where, params.detail, params.budget_bytes)

    def _live_notes(self) -> LiveNotes:
        return LiveNotes(self.root, self.real_root, self.settings.max_file_bytes, self._catchup().enqueue)

    # -- health and refresh ----------------------------------------------------------------

    def health(self, params: HealthParams) -> HealthResult:
        if self._unavailable_reason() is None:
            # a small catch-up (a first build of a few notes) is worth the wait
            self._catchup().wait(_wait_budget(params.deadline), at_most=WAIT_FOR_AT_MOST)
        return self._health(progress=None)

    def refresh(self, params: RefreshParams) -> HealthResult:
        """Sweep the folder (``full``: re-read every note) and wait for it until shortly
        before the deadline; whatever is left carries on, committed batch by batch."""
        if self._unavailable_reason() is not None:
            return self._health(progress=None)
        store = self._store()
        catchup = self._catchup()
        before = (store.meta("generation"), store.meta("content_digest"), store.meta("note_count"))
        runs_done = catchup.runs_done
        catchup.sweep(full=bool(params.full))
        cancellation = current_cancellation()
        forget = cancellation.on_cancel(catchup.wake)
        try:
            catchup.wait(_seconds_left(params.deadline) - ANSWER_RESERVE_S,
                         give_up=lambda: cancellation.requested)
            ranking_ms = (
                self.ranking.refresh(lambda: _seconds_left(params.deadline) - ANSWER_RESERVE_S)
                if self.ranking is not None and catchup.progress().idle else None
            )
        finally:
            forget()
        after = (store.meta("generation"), store.meta("content_digest"), store.meta("note_count"))
        # a refresh that stopped on an error has not advanced, whatever batches it committed
        advanced = after != before and catchup.progress().error is None
        progress = CheckpointProgress.advanced if advanced else CheckpointProgress.unchanged
        health = self._health(progress=progress, report=catchup.done_since(runs_done))
        if ranking_ms is not None and health.diagnostics is not None:
            health.diagnostics["ranker_refresh_ms"] = ranking_ms
        return health

    def _health(self, progress: CheckpointProgress | None, report: SyncReport | None = None) -> HealthResult:
        if self._unavailable_reason() is None:
            return self._recovering(lambda: self._report(progress, report))
        return self._report(progress, None)

    def _report(self, progress: CheckpointProgress | None, report: SyncReport | None) -> HealthResult:
        """Health now; ``report`` is what a refresh did (else the latest catch-up run)."""
        now = datetime.now(UTC)
        diagnostics: dict[str, Any] = {
            # Not `store_identity`: that key claims the store is this source's
            # alone, and two views of one folder are a supported configuration
            # (their shared notes fuse as duplicate views by fingerprint).
            "folder": self._folder_identity(),
            "as_of": "git_snapshot" if self.committed else "filter_on_mtime",
        }
        if self.snapshot_unavailable:
            diagnostics["as_of_snapshot_unavailable"] = self.snapshot_unavailable
        indexed_commits = self.committed.index_count() if self.committed is not None else None
        if indexed_commits is not None:
            diagnostics["snapshot_indexes"] = indexed_commits
        reason = self._unavailable_reason()
        store = self._store()
        catchup = self._catchup()
        work = catchup.progress()
        generation = "" if reason else store.meta("generation")
        if reason is not None or (not generation and work.idle):
            diagnostics["reason"] = reason or work.error or "the index has not been built"
            return HealthResult(
                status=HealthStatus.unavailable,
                checked_at=now,
                coverage=IndexCoverage.unknown,
                diagnostics=diagnostics,
                checkpoint_progress=progress,
            )
        conn = store.conn()
        failed = self._count("failures")
        notes = int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        diagnostics.update(chunk_count=int(store.meta("chunk_count", "0")))
        diagnostics.update(file_problems(conn))
        unresolved = supersedes_issues(conn)
        if unresolved:
            diagnostics["supersedes_unresolved"] = unresolved
            diagnostics["warning"] = unresolved_warning(unresolved)
        last = report or catchup.last_report
        if last is not None:
            diagnostics.update(last.diagnostics())
            if last.skipped_dirs:
                diagnostics["skipped_dirs"] = len(last.skipped_dirs)
                diagnostics["skipped_dirs_sample"] = last.skipped_dirs[:SAMPLE]
            if last.skipped_links:
                diagnostics["skipped_links_sample"] = last.skipped_links[:SAMPLE]
        if store.rebuilt_reason or catchup.rebuilt_reason:
            diagnostics["index_rebuilt"] = catchup.rebuilt_reason or store.rebuilt_reason
        if work.error:
            diagnostics["last_build_error"] = work.error
            diagnostics["detail"] = f"{work.error}; searches answer from the index as it was"
        watched = self.watcher is not None and self.watcher.watching
        diagnostics["freshness"] = describe(
            "watched" if watched else "checked", now, work.pending, store.meta("swept_ns")
        )
        if self.watcher is not None and self.watcher.error:
            diagnostics["watch_unavailable"] = self.watcher.error
        if self.ranking is not None and self.ranking.ranker.error:
            diagnostics["ranker_error"] = f"{self.ranking.ranker.error}; FTS5 ranks meanwhile"
        catching_up = not work.idle
        if catching_up:
            partial = self._partial_reason(work, failed, set())
            assert partial is not None
            diagnostics["detail"] = partial[1]
            diagnostics["index_pending"] = work.pending
        # a supersedes naming no single note leaves the note it meant current: said, not silent
        degraded = bool(failed or work.error or catching_up or unresolved)
        watermark = store.meta("watermark")
        return HealthResult(
            status=HealthStatus.degraded if degraded else HealthStatus.healthy,
            checked_at=now,
            coverage=IndexCoverage.partial if failed or catching_up else IndexCoverage.complete,
            last_success_at=self.last_success_at or _stamp(store.meta("changed_ns")),
            source_watermark=watermark or None,
            index_watermark=watermark or None,
            index_generation=generation or None,
            index_config=index_config(self.settings),
            record_count=notes + failed + (work.pending if not store.meta("build_complete") else 0),
            indexed_count=notes,
            failed_count=failed,
            diagnostics=diagnostics,
            checkpoint_progress=progress,
        )

    def _partial_reason(self, progress: Progress, failed: int, stale: set[str]) -> tuple[str, str] | None:
        store = self._store()
        indexed = row_counts(store.conn())[0]
        return partial_reason(progress, indexed, not store.meta("build_complete"), failed, stale)

    def shutdown(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self.ranking is not None:
            self.ranking.ranker.stop()
        if self.catchup is not None:
            # one writing a batch is not waited for: the batch is rolled back as the
            # process exits, and the next process redoes it
            self.catchup.stop(wait=STOP_WAIT_S)
        if self.store is not None:
            self.store.close()

    # -- plumbing --------------------------------------------------------------------------

    def _store(self) -> Store:
        if self.store is None:
            raise RpcError(ErrorCode.invalid_request, "recall/initialize has not completed")
        return self.store

    def _folder_identity(self) -> str:
        digest = hashlib.sha256(os.path.realpath(self.root).encode()).hexdigest()[:16]
        return f"dir:{digest}"

    def _unavailable_reason(self) -> str | None:
        if not os.path.exists(self.root):
            return f"notes folder {self.root} does not exist"
        if not os.path.isdir(self.root):
            return f"notes location {self.root} is not a folder"
        if not os.access(self.root, os.R_OK | os.X_OK):
            return f"notes folder {self.root} is not readable"
        return None

    def _require_available(self) -> None:
        reason = self._unavailable_reason()
        if reason is not None:
            raise RpcError(ErrorCode.source_unavailable, reason)

    def _catchup(self) -> Catchup:
        if self.catchup is None:
            raise RpcError(ErrorCode.invalid_request, "recall/initialize has not completed")
        return self.catchup

    def _warm(self) -> None:
        """The adapter has lived long enough to be kept warm by its broker: watch the
        folder (unless the settings say not to, or it watches already: a long-lived
        broker's adapter does from its start), and build the ranker if it is wanted."""
        if self.ranking is not None:
            self.ranking.ranker.may_build = True
            self.ranking.after_index_work()
        if self.settings.watch and self.watcher is None:
            self._watch()

    def _watch(self) -> None:
        """Start watching the folder."""
        store = self._store()

        def known_dir(rel: str) -> bool:
            return store.conn().execute("SELECT 1 FROM dirs WHERE path = ?", (rel,)).fetchone() is not None

        self.watcher = Watcher(self.root, self.settings, self._catchup(), known_dir)
        self.watcher.start()

    def _count(self, table: str) -> int:
        return table_count(self._store().conn(), table)

    def _indexed_hashes(self, paths: list[str]) -> dict[str, str]:
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        rows = self._store().conn().execute(
            f"SELECT path, sha256 FROM notes WHERE path IN ({marks})", paths
        )
        return {str(path): str(sha) for path, sha in rows}

    def _recovering(self, action: Callable[[], T]) -> T:
        """Run ``action``; if the index file turns out corrupt, start it afresh (the
        catch-up rebuilds it) and run it again on what is there."""
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            store = self._store()
            store.start_afresh(f"index file was corrupt ({exc}); rebuilt")
            catchup = self._catchup()
            catchup.sweep(full=True)
            catchup.wait(5.0, at_most=WAIT_FOR_AT_MOST)
            return action()


def _wait_budget(deadline: datetime) -> float:
    """How long a request may wait for the catch-up and still answer well in time."""
    return max(0.0, _seconds_left(deadline) - ANSWER_RESERVE_S) * WAIT_SHARE


def _seconds_left(deadline: datetime) -> float:
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)
    return (deadline - datetime.now(UTC)).total_seconds()


def _stamp(ns: str) -> datetime | None:
    return datetime.fromtimestamp(int(ns) / 1e9, tz=UTC) if ns else None

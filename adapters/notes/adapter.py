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
the last commit at or before that instant on HEAD's history (``snapshot.py``);
elsewhere, or when git cannot be run (health says why), notes modified after
the instant are filtered out. The git modules are imported only then.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Cancellation,
    Capability,
    CheckpointProgress,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    QueryMode,
    RefreshParams,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
    current_cancellation,
    long_lived,
)
from adapters.notes.catchup import Catchup, Progress
from adapters.notes.freshness import describe, quick_check, unwatched_guess
from adapters.notes.ranker import APPLY_BEFORE_SEARCH, PENDING_CHANGES, Ranker, tantivy_installed
from adapters.notes.ranker import wanted as ranker_wanted
from adapters.notes.reading import OutsideRoot, read_inside
from adapters.notes.report import SyncReport
from adapters.notes.scan import one_line
from adapters.notes.search import QUERY_ANALYZER, SearchContext, run_search
from adapters.notes.settings import SETTINGS_SCHEMA, NotesSettings, parse_settings
from adapters.notes.store import TITLE_WEIGHT, Store, is_corruption, row_counts
from adapters.notes.supersession import resolve_supersedes
from adapters.notes.watch import Watcher

if TYPE_CHECKING:
    from adapters.notes.expand import LineRange, Section
    from adapters.notes.gitrepo import GitRepo
    from adapters.notes.snapshot import Snapshots

ADAPTER_ID = "recall-notes/1"
INDEX_FILE = "notes-index.sqlite3"
MAX_CONCURRENCY = 4
SAMPLE = 5
WORK_TREE_KEY = "git_work_tree"
# a search waits for the catch-up only while at most this many files are pending
WAIT_FOR_AT_MOST = 256
# of the time left before a deadline, kept for answering / the share a wait may use
ANSWER_RESERVE_S = 0.25
WAIT_SHARE = 0.5
STOP_WAIT_S = 0.2  # how long shutting down waits for the catch-up thread to end
# an adapter alive this long is kept warm by its broker, so watching the folder pays (one
# a long-lived broker spawned watches at once)
WATCH_AFTER_S = 5.0
# how long a short-lived adapter's search waits for the ranker to apply a change, and
# from how many chunks it does (below, FTS5 ranks in less time than applying takes)
RANKER_WAIT_S = 0.2
APPLY_IN_SEARCH_FROM = 200_000
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
        self.ranker: Ranker | None = None
        self.last_success_at: datetime | None = None
        self.repo: GitRepo | None = None
        self.snapshot_unavailable: str | None = None  # why as_of filters in a git work tree
        self._snapshots: Snapshots | None = None
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
        self.repo = self.snapshot_unavailable = self._snapshots = self.watcher = None
        self.long_lived = long_lived()
        # a read-only index journals nothing, so it is ranked by FTS5 alone
        self.catchup = Catchup(self.store, self.root, self.settings, after_run=self._rank_upkeep)
        catchup = self.catchup
        self.ranker = Ranker(
            params.workdir, self.store, index_busy=lambda: not catchup.progress().idle
        ) if self.store.writable and tantivy_installed() else None
        available = self._unavailable_reason() is None
        if available and not self.store.meta("build_complete"):
            self.catchup.sweep()  # the first build (or the rest of a stopped one) starts now
        elif available and self.ranker is not None and self._ranker_wanted():
            # opened here rather than by the first search: a cold command greets its
            # adapter at launch, and this runs while the broker is still importing itself
            self.ranker.open()
        if available and self.long_lived and self.settings.watch:
            self._watch()  # its first answers are partial until the watch and its sweep are done
        if available:
            timer = threading.Timer(WATCH_AFTER_S, self._warm)
            timer.daemon = True
            timer.start()
        marker = _git_marker(self.root, self.settings.git_snapshots) if available else None
        if marker is not None:
            self.repo, self.snapshot_unavailable = self._work_tree(marker)
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name="Notes",
            record_types=["document"],
            query_modes=[QueryMode.lexical, QueryMode.exact],
            freshness_modes=[FreshnessMode.indexed],
            as_of_support=AsOfSupport.snapshot if self.repo else AsOfSupport.filter,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=[Capability.search, Capability.expand, Capability.checkpoint],
            sensitivity=Sensitivity.internal,
            max_concurrency=MAX_CONCURRENCY,
            freshness_policy="indexed; a watched folder applies changes as they happen, an "
            "unwatched one checks its folders and recent notes before each search; every "
            "returned note is verified against the indexed revision",
            settings_schema=SETTINGS_SCHEMA,
        )

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
        if params.as_of is not None and self.repo is not None:
            return self._search_snapshot(params, params.as_of, self.repo)
        cancellation = current_cancellation()
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
            problems = self._file_problems(store.conn())
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

        def read_note(path: str) -> bytes | None:
            read[path] = self._live_note(path)
            return read[path]

        def answer() -> tuple[list[Any], dict[str, Any]]:
            ranker, not_ranking = self._ranker_now()
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

    def _ranker_now(self) -> tuple[Ranker | None, str | None]:
        """The ranker, if this search may rank with it (it holds exactly what the index
        does), else None and why not (None when the folder is ranked by FTS5 anyway)."""
        ranker = self.ranker
        if ranker is None:
            return None, None
        conn = self._store().conn()
        chunks = row_counts(conn)[1]
        if not ranker_wanted(self.settings.ranker, chunks, ranker.exists()):
            return None, None
        why = ranker.current(conn)
        # a short-lived process applies a change here where that is quicker than FTS5, or
        # always when the settings ask for the ranker; a warm one's ranker thread does at once
        quicker = chunks >= APPLY_IN_SEARCH_FROM or self.settings.ranker == "tantivy"
        idle = self._catchup().progress().idle
        if why == PENDING_CHANGES and quicker and not ranker.may_build and idle:
            ranker.apply_now(conn, APPLY_BEFORE_SEARCH, wait=RANKER_WAIT_S)
            why = ranker.current(conn)
        if why is not None:
            if ranker.may_build and idle:  # else the catch-up's end nudges it
                ranker.nudge()
            return None, why
        return ranker, None

    def _ranker_wanted(self) -> bool:
        """Whether the folder, at its size now, is ranked by the ranker rather than FTS5."""
        assert self.ranker is not None
        chunks = row_counts(self._store().conn())[1]
        return ranker_wanted(self.settings.ranker, chunks, self.ranker.exists())

    def _rank_upkeep(self) -> None:
        """After index work: bring the ranker up to date, or delete it when the folder
        is ranked by FTS5."""
        ranker, store = self.ranker, self._store()
        if ranker is None or not store.meta("build_complete") or not self._catchup().progress().idle:
            return  # the index is still changing: the ranker is brought up to date once it rests
        if not self._ranker_wanted():
            ranker.forget()
        elif ranker.may_build:
            ranker.nudge()
        elif not ranker.exists():  # with no ranker yet, its first build will read every chunk
            ranker.forget()
        # else a short-lived process leaves the change to its search or to index work

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
            catchup.enqueue(found.paths, found.dirs)
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

    def _unwatched_guess(self, mode: str) -> tuple[str, str] | None:
        """Why an answer from a cheap check is partial, in an adapter a long-lived broker
        spawned to watch the folder (``freshness.unwatched_guess``). A command run once
        never lives to watch: it has the cheap check's guarantee, as has a user who turned
        the watch off; the manifest's freshness policy states it, and the answer's
        freshness mode (``checked``) says it was all there was."""
        if not (self.long_lived and self.settings.watch):
            return None
        return unwatched_guess(mode, self.watcher.error if self.watcher is not None else None)

    def _partial_reason(self, progress: Progress, failed: int, stale: set[str]) -> tuple[str, str] | None:
        """Why an answer is partial (a short reason and a sentence), or None if it is not."""
        indexed = row_counts(self._store().conn())[0]
        if not progress.idle:
            building = not self._store().meta("build_complete")
            changes = progress.pending - progress.rechecks
            pending = f"{changes} notes are waiting to be indexed"
            if progress.rechecks:  # written too recently for their unchanged stat to be trusted
                again = f"{progress.rechecks} recently written notes are being read again"
                pending = f"{pending}, and {again}" if changes else again
            if progress.scanning:
                pending = "the folder is still being listed"
            if progress.elsewhere:
                pending = "another process is indexing this folder"
            what = "the first index build is running" if building else "the index is catching up"
            reason = "index_building" if building else "index_catching_up"
            return reason, (
                f"{what}: {pending}; answered from the {indexed} notes indexed so far "
                "(recall refresh finishes it)"
            )
        if progress.error:
            return "index_update_failed", f"{progress.error}; answered from the previous index"
        if stale:
            return "notes_changed", f"{len(stale)} returned notes changed while the search ran"
        if failed:
            return "unreadable_notes", f"{failed} notes could not be read (see health diagnostics)"
        return None

    def _search_snapshot(self, params: SearchParams, as_of: datetime, repo: GitRepo) -> SearchResult:
        from adapters.notes.gitrepo import GitError
        from adapters.notes.snapshot import snapshot_diagnostics

        try:
            commit = repo.commit_at(as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC))
            snapshot = self._snapshot_indexes(repo).at(commit) if commit else None
        except GitError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"cannot read the notes as committed: {exc}") from None
        if snapshot is None:
            return SearchResult(
                candidates=[], outcome=SearchOutcome.success, diagnostics={"as_of": "before_first_commit"}
            )
        store = snapshot.store
        failed = int(store.conn().execute("SELECT count(*) FROM failures").fetchone()[0])
        declined = int(store.conn().execute("SELECT count(*) FROM declined").fetchone()[0])
        context = SearchContext(
            source_id=self.source_id,
            observed_at=datetime.now(UTC),
            complete=failed == 0,
            generation=store.meta("generation"),
            read_note=snapshot.read_note,
            snapshot=snapshot.short,
            discount_quotations=self.settings.examples_quote_queries,
        )
        candidates, diagnostics = run_search(store.conn(), params, context)
        diagnostics.update(
            generation=store.meta("generation"),
            indexed_count=int(store.meta("note_count", "0")),
            chunk_count=int(store.meta("chunk_count", "0")),
            **snapshot_diagnostics(snapshot),
        )
        if failed:
            diagnostics["failed_count"] = failed
        if declined:
            diagnostics["declined_count"] = declined
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if failed else SearchOutcome.success,
            diagnostics=diagnostics,
            source_watermark=store.meta("watermark") or None,
        )

    # -- expand --------------------------------------------------------------------------

    def expand(self, params: ExpandParams) -> ExpandResult:
        from adapters.notes.expand import (  # not needed to search
            Section,
            parse_local,
            render,
            section_heading,
        )

        local = params.locator.split(":", 1)[1]
        where = parse_local(local)
        self._require_available()
        if where.commit is not None:
            return render(self._committed_section(params.locator, where), where, params.detail, params.budget_bytes)
        store = self._store()
        self._catchup().wait(_wait_budget(params.deadline), at_most=WAIT_FOR_AT_MOST)

        def read() -> Section:
            conn = store.conn()
            note = conn.execute(
                "SELECT id, sha256 FROM notes WHERE path = ?", (where.path,)
            ).fetchone()
            if note is None:  # never read a path the index does not hold (the scan skipped it)
                raise RpcError(
                    ErrorCode.locator_expired,
                    f"{params.locator}: {where.path} is not an indexed note; search again",
                )
            data = self._read_note(params.locator, where.path)
            if hashlib.sha256(data).hexdigest() != note[1]:
                self._catchup().enqueue([where.path])
                raise RpcError(
                    ErrorCode.locator_expired,
                    f"{params.locator}: {where.path} changed since it was indexed; search again",
                )
            title, heading = section_heading(conn, note[0], where, params.locator)
            return Section(title=title, heading=heading, data=data)

        section = self._recovering(read)
        return render(section, where, params.detail, params.budget_bytes)

    def _committed_section(self, locator: str, where: LineRange) -> Section:
        """The section a snapshot locator names, read from the notes as committed."""
        from adapters.notes.expand import Section, section_heading
        from adapters.notes.gitrepo import GitError

        if self.repo is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: names commit {where.commit}, but the notes folder is not "
                "in a git repository git can read now; search again",
            )
        try:
            snapshot = self._snapshot_indexes(self.repo).named(str(where.commit))
        except GitError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"{locator}: {exc}") from None
        if snapshot is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: commit {where.commit} is no longer in the repository; search again",
            )
        conn = snapshot.store.conn()
        note = conn.execute("SELECT id FROM notes WHERE path = ?", (where.path,)).fetchone()
        data = snapshot.read_note(where.path)
        if note is None or data is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {where.path} was not an indexed note in commit {where.commit}",
            )
        title, heading = section_heading(conn, note[0], where, locator)
        return Section(title=title, heading=heading, data=data, revision=f"git:{where.commit}")

    def _live_note(self, path: str) -> bytes | None:
        try:
            return read_inside(self.root, path, self.settings.max_file_bytes + 1, self.real_root)
        except OSError:
            return None

    def _read_note(self, locator: str, path: str) -> bytes:
        """The note's bytes as they are now; a note that now resolves outside the folder
        (a link swapped in for it) is refused and forgotten, reported as a skipped link."""
        try:
            return read_inside(self.root, path, self.settings.max_file_bytes + 1, self.real_root)
        except OutsideRoot:
            self._catchup().enqueue([path])
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {path} now resolves outside the notes folder and is skipped as "
                "a link; it is not read",
            ) from None
        except FileNotFoundError:
            self._catchup().enqueue([path])
            raise RpcError(
                ErrorCode.locator_expired, f"{locator}: {path} is no longer a note; search again"
            ) from None
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable, f"cannot read note {path}: {exc.strerror or exc}"
            ) from None

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
            ranking_ms = self._refresh_ranker(params.deadline) if catchup.progress().idle else None
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

    def _refresh_ranker(self, deadline: datetime) -> int | None:
        """Bring the ranker up to date (refresh is index work: a first build of it too);
        how long that took in ms, or None when the folder is ranked by FTS5."""
        ranker = self.ranker
        if ranker is None:
            return None
        started = time.monotonic()
        ranker.may_build = True
        chunks = row_counts(self._store().conn())[1]
        self._rank_upkeep()
        if not ranker_wanted(self.settings.ranker, chunks, ranker.exists()):
            return None
        ranker.wait_idle(_seconds_left(deadline) - ANSWER_RESERVE_S)
        if not ranker.wait_unleased(0):  # another process is writing it (building it, say)
            if ranker.wait_unleased(_seconds_left(deadline) - ANSWER_RESERVE_S):
                ranker.nudge()  # what it left undone is done here
                ranker.wait_idle(_seconds_left(deadline) - ANSWER_RESERVE_S)
        return round((time.monotonic() - started) * 1000)

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
            "as_of": "git_snapshot" if self.repo else "filter_on_mtime",
        }
        if self.snapshot_unavailable:
            diagnostics["as_of_snapshot_unavailable"] = self.snapshot_unavailable
        if self._snapshots is not None:
            diagnostics["snapshot_indexes"] = self._snapshots.count()
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
        diagnostics.update(self._file_problems(conn))
        supersedes_issues = self._supersedes_issues(conn)
        if supersedes_issues:
            diagnostics["supersedes_unresolved"] = supersedes_issues
            diagnostics["warning"] = _unresolved_warning(supersedes_issues)
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
        if self.ranker is not None and self.ranker.error:
            diagnostics["ranker_error"] = f"{self.ranker.error}; FTS5 ranks meanwhile"
        catching_up = not work.idle
        if catching_up:
            partial = self._partial_reason(work, failed, set())
            assert partial is not None
            diagnostics["detail"] = partial[1]
            diagnostics["index_pending"] = work.pending
        # a supersedes naming no single note leaves the note it meant current: said, not silent
        degraded = bool(failed or work.error or catching_up or supersedes_issues)
        watermark = store.meta("watermark")
        return HealthResult(
            status=HealthStatus.degraded if degraded else HealthStatus.healthy,
            checked_at=now,
            coverage=IndexCoverage.partial if failed or catching_up else IndexCoverage.complete,
            last_success_at=self.last_success_at or _stamp(store.meta("changed_ns")),
            source_watermark=watermark or None,
            index_watermark=watermark or None,
            index_generation=generation or None,
            index_config=self._index_config(),
            record_count=notes + failed + (work.pending if not store.meta("build_complete") else 0),
            indexed_count=notes,
            failed_count=failed,
            diagnostics=diagnostics,
            checkpoint_progress=progress,
        )

    def _file_problems(self, conn: sqlite3.Connection) -> dict[str, Any]:
        """Samples of files not indexed, or indexed with a problem, each {path, reason, fix}."""
        found: dict[str, Any] = {}
        failures = conn.execute(
            "SELECT path, reason FROM failures ORDER BY path LIMIT ?", (SAMPLE,)
        ).fetchall()
        if failures:
            found["failures"] = [
                {"path": p, "reason": r, "fix": "make the file readable, or add it to the "
                 "'exclude' setting"} for p, r in failures
            ]
        declined = conn.execute(
            "SELECT path, reason, fix FROM declined ORDER BY path LIMIT ?", (SAMPLE,)
        ).fetchall()
        if declined:
            found["declined"] = [{"path": one_line(p), "reason": r, "fix": f} for p, r, f in declined]
            found["declined_count"] = self._count("declined")
        repaired = conn.execute(
            "SELECT path, decode_problem FROM notes WHERE decode_problem != '' ORDER BY path LIMIT ?",
            (SAMPLE,),
        ).fetchall()
        if repaired:
            found["encoding_problems"] = [
                {"path": p, "reason": r, "fix": "re-save the note as UTF-8"} for p, r in repaired
            ]
        problems = conn.execute(
            "SELECT path, front FROM notes WHERE has_problems = 1 ORDER BY path LIMIT ?", (SAMPLE,)
        ).fetchall()
        if problems:
            found["front_matter_problems"] = [
                {"path": p, "problems": json.loads(f)["problems"]} for p, f in problems
            ]
        return found

    def _supersedes_issues(self, conn: sqlite3.Connection) -> list[dict[str, Any]]:
        issues: list[dict[str, Any]] = []
        for path, front in conn.execute(
            "SELECT path, front FROM notes WHERE has_supersedes = 1 ORDER BY path"
        ):
            issues.extend(resolve_supersedes(conn, path, json.loads(front)["supersedes"])[1])
        return issues[: SAMPLE * 4]

    def _index_config(self) -> str:
        return (
            "sqlite-fts5/2 chunking=heading tokenizer=porter+unicode61-remove_diacritics2 "
            f"query={QUERY_ANALYZER} "
            f"scoring=bm25-k1.2-b0.75 weights=title:{TITLE_WEIGHT:g},body:1 "
            f"settings={self.settings.digest}"
        )

    def shutdown(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self.ranker is not None:
            self.ranker.stop()
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

    def _work_tree(self, marker: str) -> tuple[GitRepo | None, str | None]:
        """The git work tree holding the folder, as git reported it when ``marker`` (the
        ``.git`` entry found above the folder) was last seen; git is asked only when the
        marker changed, which keeps a subprocess off every handshake."""
        from adapters.notes.gitrepo import GitRepo, find_repo, git_on_path

        if not git_on_path():
            return None, "the notes folder is in a git repository but the git program is not on PATH"
        store = self._store()
        cached = json.loads(store.meta(WORK_TREE_KEY) or "{}")
        if cached.get("marker") == marker:
            return GitRepo(cached["toplevel"], cached["prefix"]), None
        repo, reason = find_repo(self.root)
        if repo is not None:
            store.set_meta(
                WORK_TREE_KEY, json.dumps({"marker": marker, "toplevel": repo.toplevel, "prefix": repo.prefix})
            )
        return repo, reason

    def _snapshot_indexes(self, repo: GitRepo) -> Snapshots:
        if self._snapshots is None:
            from adapters.notes.snapshot import Snapshots

            self._snapshots = Snapshots(repo, self.workdir, os.path.realpath(self.root), self.settings)
        return self._snapshots

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
        if self.ranker is not None:
            self.ranker.may_build = True
            self._rank_upkeep()
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
        return int(self._store().conn().execute(f"SELECT count(*) FROM {table}").fetchone()[0])

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


def _unresolved_warning(issues: list[dict[str, Any]]) -> str:
    """One line naming the ``supersedes`` references that name no single note."""
    named = "; ".join(
        f"{issue['note']}: {issue['supersedes']!r} "
        + ("names several notes" if issue.get("ambiguous") else "names no note")
        for issue in issues[:3]
    )
    more = f" and {len(issues) - 3} more" if len(issues) > 3 else ""
    return (
        f"{len(issues)} supersedes reference{'s name' if len(issues) != 1 else ' names'} no single note "
        f"({named}{more}), so the notes they meant stay current; a reference names a note by "
        "its path, its file name without the extension, or the id its front matter declares"
    )


def _git_marker(root: str, opted: bool | None) -> str | None:
    """The ``.git`` entry whose history answers ``as_of``: the one in ``root`` itself (the
    folder is a work tree's root), or with ``git_snapshots = true`` the nearest above it;
    none with ``git_snapshots = false``. git itself then decides."""
    if opted is False:
        return None
    current = os.path.realpath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.exists(marker):
            return marker
        parent = os.path.dirname(current)
        if parent == current or not opted:
            return None
        current = parent

"""The notes adapter: a folder of markdown and text notes behind protocol v1.

The first handshake builds a persistent SQLite FTS5 index in the workdir;
every search, expand and refresh re-checks the folder cheaply and re-indexes
only what changed. A location that does not exist is not refused at the
handshake (the folder may live on a drive that is not mounted yet): the
source reports health ``unavailable`` and each search fails with
source_unavailable, both naming the folder. A handshake without any location
is refused with -32602. A corrupt index file is discarded and rebuilt.

``as_of``: in a git work tree the manifest declares ``snapshot`` and a search
with ``as_of`` answers from the notes as committed in the last commit at or
before that instant on HEAD's history (``snapshot.py``); elsewhere, or when git
cannot be run (health says why), notes modified after the instant are filtered
out. The git modules are imported only for a folder inside a work tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from adapter_sdk.protocol import (
    AdapterSkipReason,
    AsOfSupport,
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
)
from adapter_sdk.server import Adapter
from adapters.notes.expand import LineRange, Section, parse_local, render
from adapters.notes.search import QUERY_ANALYZER, SearchContext, resolve_supersedes, run_search
from adapters.notes.settings import SETTINGS_SCHEMA, NotesSettings, parse_settings
from adapters.notes.store import TITLE_WEIGHT, Store, is_corruption
from adapters.notes.sync import SyncReport, sync

if TYPE_CHECKING:
    from adapters.notes.gitrepo import GitRepo
    from adapters.notes.snapshot import Snapshots

ADAPTER_ID = "recall-notes/1"
INDEX_FILE = "notes-index.sqlite3"
MAX_CONCURRENCY = 4
SAMPLE = 5
WORK_TREE_KEY = "git_work_tree"
T = TypeVar("T")


class NotesAdapter(Adapter):
    def __init__(self) -> None:
        self.root = ""
        self.workdir = ""
        self.source_id = ""
        self.settings = NotesSettings()
        self.store: Store | None = None
        self.last_sync: SyncReport | None = None
        self.last_success_at: datetime | None = None
        self.last_error: str | None = None
        self.repo: GitRepo | None = None
        self.snapshot_unavailable: str | None = None  # why as_of filters in a git work tree
        self._snapshots: Snapshots | None = None
        self._sync_lock = threading.Lock()

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
        self.workdir = params.workdir
        self.source_id = params.source_id
        try:
            os.makedirs(params.workdir, exist_ok=True)
        except OSError as exc:
            raise RpcError(
                ErrorCode.invalid_params, f"cannot create workdir {params.workdir}: {exc.strerror}"
            ) from None
        self.store = Store(
            os.path.join(params.workdir, INDEX_FILE), os.path.realpath(self.root), self.settings.digest
        )
        self.store.open()
        # the first handshake builds the index; later ones leave the re-check to the search
        if self._unavailable_reason() is None and not self.store.meta("generation"):
            self._recovering(lambda: self._sync(full=False))
        marker = _git_marker(self.root) if self._unavailable_reason() is None else None
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
            freshness_policy="indexed; every search re-checks the folder and re-reads only "
            "notes whose size or mtime changed",
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

        def answer() -> tuple[list[Any], dict[str, Any], SyncReport]:
            report = self._sync(full=False)
            context = SearchContext(
                source_id=self.source_id,
                observed_at=datetime.now(UTC),
                complete=report.files_failed == 0,
                generation=store.meta("generation"),
                read_note=self._live_note,
            )
            candidates, diagnostics = run_search(store.conn(), params, context)
            return candidates, diagnostics, report

        candidates, diagnostics, report = self._recovering(answer)
        diagnostics.update(
            generation=store.meta("generation"),
            indexed_count=int(store.meta("note_count", "0")),
            chunk_count=int(store.meta("chunk_count", "0")),
            **report.diagnostics(),
        )
        if report.files_failed:
            diagnostics["failed_count"] = report.files_failed
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if report.files_failed else SearchOutcome.success,
            diagnostics=diagnostics,
            source_watermark=store.meta("watermark") or None,
        )

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
        context = SearchContext(
            source_id=self.source_id,
            observed_at=datetime.now(UTC),
            complete=failed == 0,
            generation=store.meta("generation"),
            read_note=snapshot.read_note,
            snapshot=snapshot.short,
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
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if failed else SearchOutcome.success,
            diagnostics=diagnostics,
            source_watermark=store.meta("watermark") or None,
        )

    # -- expand --------------------------------------------------------------------------

    def expand(self, params: ExpandParams) -> ExpandResult:
        local = params.locator.split(":", 1)[1]
        where = parse_local(local)
        self._require_available()
        if where.commit is not None:
            return render(self._committed_section(params.locator, where), where, params.detail, params.budget_bytes)
        store = self._store()

        def read() -> Section:
            conn = store.conn()
            indexed = conn.execute("SELECT 1 FROM notes WHERE path = ?", (where.path,)).fetchone()
            if indexed:  # re-check just this note; never index a path the folder scan skipped
                sync(store, self.root, self.settings, only=[where.path])
            note = conn.execute(
                "SELECT id, sha256 FROM notes WHERE path = ?", (where.path,)
            ).fetchone()
            if note is None or not os.path.isfile(os.path.join(self.root, where.path)):
                raise RpcError(
                    ErrorCode.locator_expired,
                    f"{params.locator}: {where.path} is no longer an indexed note; search again",
                )
            title, heading = _section_heading(conn, note[0], where, params.locator)
            data = self._read_note(where.path)
            if hashlib.sha256(data).hexdigest() != note[1]:
                raise RpcError(
                    ErrorCode.locator_expired,
                    f"{params.locator}: {where.path} changed while it was read; search again",
                )
            return Section(title=title, heading=heading, data=data)

        section = self._recovering(read)
        return render(section, where, params.detail, params.budget_bytes)

    def _committed_section(self, locator: str, where: LineRange) -> Section:
        """The section a snapshot locator names, read from the notes as committed."""
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
        title, heading = _section_heading(conn, note[0], where, locator)
        return Section(title=title, heading=heading, data=data, revision=f"git:{where.commit}")

    def _live_note(self, path: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, path), "rb") as handle:
                return handle.read(self.settings.max_file_bytes + 1)
        except OSError:
            return None

    def _read_note(self, path: str) -> bytes:
        try:
            with open(os.path.join(self.root, path), "rb") as handle:
                return handle.read(self.settings.max_file_bytes + 1)
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable, f"cannot read note {path}: {exc.strerror or exc}"
            ) from None

    # -- health and refresh ----------------------------------------------------------------

    def health(self, params: HealthParams) -> HealthResult:
        return self._health(progress=None)

    def refresh(self, params: RefreshParams) -> HealthResult:
        reason = self._unavailable_reason()
        if reason is not None:
            return self._health(progress=None)
        store = self._store()
        before = store.meta("generation")
        try:
            self._recovering(lambda: self._sync(full=bool(params.full)))
        except (OSError, sqlite3.Error) as exc:
            self.last_error = f"refresh failed: {exc}"
        after = store.meta("generation")
        progress = CheckpointProgress.advanced if after != before else CheckpointProgress.unchanged
        return self._health(progress=progress)

    def _health(self, progress: CheckpointProgress | None) -> HealthResult:
        if self._unavailable_reason() is None:
            return self._recovering(lambda: self._report(progress))
        return self._report(progress)

    def _report(self, progress: CheckpointProgress | None) -> HealthResult:
        now = datetime.now(UTC)
        diagnostics: dict[str, Any] = {
            "store_identity": self._store_identity(),
            "as_of": "git_snapshot" if self.repo else "filter_on_mtime",
        }
        if self.snapshot_unavailable:
            diagnostics["as_of_snapshot_unavailable"] = self.snapshot_unavailable
        if self._snapshots is not None:
            diagnostics["snapshot_indexes"] = self._snapshots.count()
        reason = self._unavailable_reason()
        store = self._store()
        generation = "" if reason else store.meta("generation")
        if reason is not None or not generation:
            diagnostics["reason"] = reason or self.last_error or "the index has not been built"
            return HealthResult(
                status=HealthStatus.unavailable,
                checked_at=now,
                coverage=IndexCoverage.unknown,
                diagnostics=diagnostics,
                checkpoint_progress=progress,
            )
        conn = store.conn()
        failures = conn.execute(
            "SELECT path, reason FROM failures ORDER BY path LIMIT ?", (SAMPLE,)
        ).fetchall()
        failed = int(conn.execute("SELECT count(*) FROM failures").fetchone()[0])
        notes = int(store.meta("note_count", "0"))
        diagnostics.update(chunk_count=int(store.meta("chunk_count", "0")))
        if failures:
            diagnostics["failures"] = [{"path": p, "reason": r} for p, r in failures]
        problems = conn.execute(
            "SELECT path, front FROM notes WHERE has_problems = 1 ORDER BY path LIMIT ?", (SAMPLE,)
        ).fetchall()
        if problems:
            diagnostics["front_matter_problems"] = [
                {"path": p, "problems": json.loads(f)["problems"]} for p, f in problems
            ]
        supersedes_issues = self._supersedes_issues(conn)
        if supersedes_issues:
            diagnostics["supersedes_unresolved"] = supersedes_issues
        if self.last_sync is not None:
            diagnostics.update(self.last_sync.diagnostics())
            if self.last_sync.skipped_dirs:
                diagnostics["skipped_dirs"] = len(self.last_sync.skipped_dirs)
                diagnostics["skipped_dirs_sample"] = self.last_sync.skipped_dirs[:SAMPLE]
            if self.last_sync.skipped_links:
                diagnostics["skipped_links_sample"] = self.last_sync.skipped_links[:SAMPLE]
        if store.rebuilt_reason:
            diagnostics["index_rebuilt"] = store.rebuilt_reason
        if self.last_error:
            diagnostics["last_build_error"] = self.last_error
        degraded = bool(failed or self.last_error)
        watermark = store.meta("watermark")
        return HealthResult(
            status=HealthStatus.degraded if degraded else HealthStatus.healthy,
            checked_at=now,
            coverage=IndexCoverage.partial if failed else IndexCoverage.complete,
            last_success_at=self.last_success_at,
            source_watermark=watermark,
            index_watermark=watermark,
            index_generation=generation,
            index_config=self._index_config(),
            record_count=notes + failed,
            indexed_count=notes,
            failed_count=failed,
            diagnostics=diagnostics,
            checkpoint_progress=progress,
        )

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

    def _store_identity(self) -> str:
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

    def _sync(self, full: bool) -> SyncReport:
        with self._sync_lock:
            report = sync(self._store(), self.root, self.settings, full=full)
            self.last_sync = report
            self.last_success_at = datetime.now(UTC)
            self.last_error = None
            return report

    def _recovering(self, action: Callable[[], T]) -> T:
        """Run ``action``; if the index file turns out corrupt, rebuild it and run it again."""
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            store = self._store()
            store.discard()
            store.open()
            store.rebuilt_reason = f"index file was corrupt ({exc}); rebuilt"
            self._sync(full=True)
            return action()


def _section_heading(
    conn: sqlite3.Connection, note_id: int, where: LineRange, locator: str
) -> tuple[str, str]:
    """Title and heading of the chunk spanning exactly the locator's lines."""
    chunk = conn.execute(
        "SELECT t.title, c.heading FROM chunks c JOIN chunk_text t ON t.rowid = c.id"
        " WHERE c.note_id = ? AND c.start_line = ? AND c.end_line = ?",
        (note_id, where.start, where.end),
    ).fetchone()
    if chunk is None:
        raise RpcError(
            ErrorCode.locator_expired,
            f"{locator}: lines {where.start}-{where.end} of {where.path} no longer "
            "span one section (the note changed); search again",
        )
    return str(chunk[0]), str(chunk[1])


def _git_marker(root: str) -> str | None:
    """The ``.git`` entry in ``root`` or the nearest folder above it; git itself then decides."""
    current = os.path.realpath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.exists(marker):
            return marker
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent

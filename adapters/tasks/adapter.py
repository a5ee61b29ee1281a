"""The tasks adapter: a Taskwarrior data folder, a todo.txt file or the Tasks CLI's store, searched live.

Each search reads the store's current state (through the snapshot cache, so
an unchanged store is not re-exported), applies the request's filters and
``as_of`` and ranks the tasks. Nothing is ever written to the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Candidate,
    Capability,
    ErrorCode,
    ExcerptKind,
    ExecutableRequirement,
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
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
    loading,
)
from adapter_sdk.lexical import tokenize
from adapters.tasks import render
from adapters.tasks.config import SETTINGS_SCHEMA, TASKS_CLI, TASKWARRIOR, TasksConfig, load_config
from adapters.tasks.query import TaskQuery, parse_query
from adapters.tasks.ranking import (
    STEMS_ANALYZER,
    Hit,
    RecordIndex,
    Scope,
    project_matches,
    rank,
    record_stems,
    stems_fit,
)
from adapters.tasks.snapshot import Snapshot, SnapshotStore, Stemming
from adapters.tasks.task_record import CLOSED_STATUSES, TaskRecord

if TYPE_CHECKING:
    from adapters.tasks.taskscli import TasksCli
    from adapters.tasks.taskwarrior import TaskProgram

ADAPTER_ID = "recall-tasks/1"
RECORD_TYPE = "task"
DEFAULT_LIMIT = 20
MIN_BUDGET_BYTES = 64
SUPPORTED_FILTERS = ("record_types", "since", "until", "project")
_TASKWARRIOR_LOCATOR = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
_TODOTXT_LOCATOR = re.compile(r"[0-9a-f]{12}")
_TASKS_CLI_LOCATOR = re.compile(r"[0-9a-f]{8}")
_LOCATOR_FORMS = {
    TASKWARRIOR: (_TASKWARRIOR_LOCATOR, "<source>:<uuid>"),
    TASKS_CLI: (_TASKS_CLI_LOCATOR, "<source>:<8 hex Tasks id>"),
}
_TODOTXT_FORM = (_TODOTXT_LOCATOR, "<source>:<12 hex stable id>")
_DISPLAY_NAMES = {TASKWARRIOR: "Tasks (Taskwarrior)", TASKS_CLI: "Tasks (Tasks CLI)"}
STEMMING = Stemming(record_stems, STEMS_ANALYZER, stems_fit)  # what the snapshot cache keeps


class TasksAdapter(Adapter):
    def __init__(self) -> None:
        self.config: TasksConfig | None = None
        self.program: TaskProgram | None = None
        self.cli: TasksCli | None = None
        self.store: SnapshotStore | None = None
        self._index: RecordIndex | None = None

    # -- handshake ---------------------------------------------------------

    def initialize(self, params: InitializeParams) -> Manifest:
        config = load_config(params)
        self.config = config
        # only the configured store's reader is imported: the process starts per query
        if config.mode == TASKWARRIOR:
            from adapters.tasks.taskwarrior import DATA_FILES, TaskProgram

            program = TaskProgram(config.task_binary, config.location)
            self.program = program
            files = [config.location / name for name in DATA_FILES]
            self.store = SnapshotStore(
                files, config.workdir, f"{TASKWARRIOR}:{config.location.resolve()}",
                lambda _contents, timeout: (program.export(timeout), []),
                STEMMING,
            )
            requirements: list[ExecutableRequirement] | None = [ExecutableRequirement(
                name="task", command=config.task_binary,
                purpose="reads the Taskwarrior data folder with `task export`",
            )]
        elif config.mode == TASKS_CLI:
            from adapters.tasks import taskscli

            cli: TasksCli = (
                taskscli.RecordedTasksCli(config.replay) if config.replay is not None
                else taskscli.TasksProgram(config.binary, config.location)
            )
            self.cli = cli
            self.store = SnapshotStore(
                cli.data_files(), config.workdir, config.store_identity,
                lambda _contents, timeout: (taskscli.read_tasks(cli, timeout), []),
                STEMMING,
            )
            requirements = None if config.replay is not None else [ExecutableRequirement(
                name="tasks", command=config.binary,
                purpose="reads the Tasks CLI's store with `tasks list --json` and `tasks show`",
            )]
        else:
            from adapters.tasks.todotxt import DONE_FILE

            files = [config.location, config.location.with_name(DONE_FILE)]
            todo_file = config.location
            self.store = SnapshotStore(
                files, config.workdir, f"todotxt:{config.location.resolve()}",
                lambda contents, _timeout: _parse_list(todo_file, contents),
                STEMMING,
            )
            requirements = None
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name=_DISPLAY_NAMES.get(config.mode, "Tasks (todo.txt)"),
            record_types=[RECORD_TYPE],
            query_modes=[QueryMode.exact, QueryMode.lexical, QueryMode.structured],
            freshness_modes=[FreshnessMode.live],
            # the Tasks CLI keeps no record history: no entry or end instant to filter on
            as_of_support=AsOfSupport.none if config.mode == TASKS_CLI else AsOfSupport.filter,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=[Capability.search, Capability.expand],
            sensitivity=Sensitivity.internal,
            freshness_policy=(
                "live: every request reads the store's current state; an unchanged store "
                "is answered from a snapshot cache validated by file size, mtime and content hash"
            ),
            settings_schema=SETTINGS_SCHEMA,
            executable_requirements=requirements,
        )

    # -- search ------------------------------------------------------------

    def search(self, params: SearchParams) -> SearchResult:
        started = time.perf_counter()
        filters = params.filters
        if filters.record_types and RECORD_TYPE not in filters.record_types:
            return _skipped(AdapterSkipReason.record_type_mismatch,
                            {"record_types_supported": [RECORD_TYPE]})
        if filters.entities:
            return _skipped(AdapterSkipReason.filter_unsupported, {
                "unsupported_filters": ["entities"],
                "supported_filters": list(SUPPORTED_FILTERS),
            })
        query = parse_query(params.query)
        if query.is_empty:
            return _skipped(AdapterSkipReason.not_applicable, {"query_term_count": 0})

        snapshot = self._snapshot(params.deadline)
        scope = Scope(filters.project, filters.since, filters.until, params.as_of)
        ranking = rank(snapshot.records, query, scope, params.limit or DEFAULT_LIMIT,
                       self._record_index(snapshot))
        outcome = SearchOutcome.partial if ranking.undated_matches_excluded else SearchOutcome.success
        now = datetime.now(UTC)
        candidates = [
            self._candidate(hit, position, snapshot, now, confirmed=outcome == SearchOutcome.success)
            for position, hit in enumerate(ranking.hits, start=1)
        ]
        diagnostics: dict[str, Any] = {
            **self._store_diagnostics(snapshot),
            "query_modes_used": _modes_used(query),
            "query_term_count": len(query.terms),
            "pool_size": ranking.pool_size,
            "matched_count": ranking.matched_count,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        if query.analyzed.removed:
            diagnostics["query_terms_removed"] = list(query.analyzed.removed)
        if params.as_of is not None:
            diagnostics["as_of"] = "filter_on_entry_and_end"
            diagnostics["excluded_by_as_of"] = ranking.excluded_by_as_of
        if ranking.undated_matches_excluded:
            diagnostics["undated_matches_excluded"] = ranking.undated_matches_excluded
        return SearchResult(
            candidates=candidates, outcome=outcome, diagnostics=diagnostics,
            source_watermark=snapshot.watermark,
        )

    def _candidate(
        self, hit: Hit, position: int, snapshot: Snapshot, now: datetime, *, confirmed: bool
    ) -> Candidate:
        record = hit.record
        return Candidate(
            candidate_id=record.record_id,
            source_record_id=record.record_id,
            locator=f"{self._config.source_id}:{record.record_id}",
            record_type=RECORD_TYPE,
            title=record.description or "(no description)",
            excerpt=render.excerpt(record, hit.matched_annotation),
            excerpt_kind=ExcerptKind.matched if hit.matched_annotation else ExcerptKind.preview,
            local_rank=position,
            local_score=hit.score,
            relevance=hit.relevance,
            match_signals=list(hit.signals) or None,
            observed_at=now,
            confirmed_at=now if confirmed else None,
            event_time=record.entry,
            valid_to=record.end if record.status in CLOSED_STATUSES else None,
            source_revision=snapshot.watermark,
            sensitivity=Sensitivity.internal,
            metadata=_metadata(record, self._config.mode),
            content_fingerprint=hashlib.sha256(
                " ".join(tokenize(record.description)).encode()
            ).hexdigest()[:16],
        )

    # -- expand ------------------------------------------------------------

    def expand(self, params: ExpandParams) -> ExpandResult:
        local = params.locator.split(":", 1)[1]
        pattern, form = _LOCATOR_FORMS.get(self._config.mode, _TODOTXT_FORM)
        if not pattern.fullmatch(local):
            raise RpcError(ErrorCode.locator_unknown, f"{params.locator!r} does not name a task: expected {form}")
        if 0 < params.budget_bytes < MIN_BUDGET_BYTES:
            raise RpcError(
                ErrorCode.budget_exceeded,
                f"budget of {params.budget_bytes} bytes is below the {MIN_BUDGET_BYTES}-byte "
                "minimum for a task",
            )
        snapshot = self._snapshot(params.deadline)
        record = next((r for r in snapshot.records if r.record_id == local), None)
        if record is not None and self.cli is not None:  # its notes are only in `tasks show`
            from adapters.tasks.taskscli import read_task

            shown = read_task(self.cli, local, _seconds_left(params.deadline))
            record = replace(shown, project=shown.project or record.project,
                             projects=shown.projects or record.projects) if shown else None
        if record is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"task {local} is no longer in the store (deleted from the file, purged, "
                "or its todo.txt line was edited); search again",
            )
        siblings = [
            r for r in snapshot.records
            if record.project and r.record_id != record.record_id
            and project_matches(r, record.project)
        ]
        siblings.sort(key=lambda r: (r.status in CLOSED_STATUSES, r.description))
        content, level_cut = render.detail(record, params.detail, siblings)
        content, budget_cut = render.fit_budget(content, params.budget_bytes)
        boundary = "budget_bytes" if budget_cut else (
            "excerpt_annotations" if level_cut else None
        )
        return ExpandResult(
            content=content,
            truncated=budget_cut or level_cut,
            truncation_boundary=boundary,
            source_revision=snapshot.watermark,
            provenance=self._provenance(record),
        )

    def _provenance(self, record: TaskRecord) -> str:
        if record.file is not None:
            return f"{record.file} line {record.line}"
        return f"task {record.short_id} ({self._config.location.name})"

    # -- health ------------------------------------------------------------

    def health(self, params: HealthParams) -> HealthResult:
        config = self._config
        checked_at = datetime.now(UTC)
        diagnostics: dict[str, Any] = {
            "mode": config.mode,
            "store_identity": config.store_identity,
        }
        try:
            if self.program is not None:
                diagnostics["task_binary"] = config.task_binary
                diagnostics["task_version"] = self.program.version(_seconds_left(params.deadline))
            snapshot = self._snapshot(params.deadline)
            if self.cli is not None:
                from adapters.tasks.taskscli import check

                diagnostics["check"] = check(self.cli, _seconds_left(params.deadline))
        except RpcError as exc:
            if exc.code == ErrorCode.deadline_exceeded:
                raise
            diagnostics["reason"] = exc.message
            return HealthResult(
                status=HealthStatus.unavailable, checked_at=checked_at,
                coverage=IndexCoverage.unknown, diagnostics=diagnostics,
            )
        diagnostics.update(self._store_diagnostics(snapshot))
        statuses: dict[str, int] = {}
        for record in snapshot.records:
            statuses[record.status] = statuses.get(record.status, 0) + 1
        diagnostics["status_counts"] = dict(sorted(statuses.items()))
        if snapshot.unparsed_lines:
            diagnostics["unparsed_lines_sample"] = snapshot.unparsed_lines[:5]
        count = len(snapshot.records)
        return HealthResult(
            status=HealthStatus.healthy,
            checked_at=checked_at,
            coverage=IndexCoverage.complete,
            last_success_at=checked_at,
            source_watermark=snapshot.watermark,
            index_watermark=snapshot.watermark,
            record_count=count,
            indexed_count=count,
            failed_count=0,
            diagnostics=diagnostics,
        )

    # -- shared ------------------------------------------------------------

    @property
    def _config(self) -> TasksConfig:
        if self.config is None:
            raise RpcError(ErrorCode.invalid_request, "tasks adapter is not initialized")
        return self.config

    def _snapshot(self, deadline: datetime) -> Snapshot:
        assert self.store is not None
        if self.program is not None:
            self.program.resolve()  # a missing program fails even when the cache could answer
            self.program.require_data_folder()
        elif self.cli is not None:
            self.cli.require()
        else:
            _require_todo_file(self._config.location)
        try:
            return self.store.current(_seconds_left(deadline))
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable,
                f"cannot read {exc.filename or self._config.location}: {exc.strerror}",
            ) from None

    def _record_index(self, snapshot: Snapshot) -> RecordIndex:
        index = self._index
        if index is None or index.records is not snapshot.records:
            with loading():
                index = self._index = RecordIndex(snapshot.records, snapshot.stems)
        return index

    def _store_diagnostics(self, snapshot: Snapshot) -> dict[str, Any]:
        assert self.store is not None
        counter = "exports_run" if self.program is not None else (
            "listings_run" if self.cli is not None else "parses_run"
        )
        diagnostics: dict[str, Any] = {
            "mode": self._config.mode,
            "record_count": len(snapshot.records),
            "snapshot": snapshot.basis,
            counter: self.store.loads,
        }
        if self.program is None and self.cli is None:
            diagnostics["unparsed_lines"] = len(snapshot.unparsed_lines)
        return diagnostics


def _parse_list(todo_file: Path, contents: dict[str, bytes]) -> tuple[list[TaskRecord], list[str]]:
    from adapters.tasks.todotxt import read_list

    modified = {}
    for name in contents:
        with contextlib.suppress(OSError):
            stamp = (todo_file.parent / name).stat().st_mtime
            modified[name] = datetime.fromtimestamp(stamp, UTC)
    parsed = read_list(todo_file, contents, modified)
    return parsed.records, parsed.unparsed_lines


def _require_todo_file(location: Path) -> None:
    if not location.is_file():
        raise RpcError(
            ErrorCode.source_unavailable,
            f"todo.txt file {location} does not exist or is not a file",
        )


def _seconds_left(deadline: datetime) -> float:
    return (deadline - datetime.now(UTC)).total_seconds()


def _skipped(reason: AdapterSkipReason, diagnostics: dict[str, Any]) -> SearchResult:
    return SearchResult(candidates=[], outcome=SearchOutcome.skipped, reason=reason,
                        diagnostics=diagnostics)


def _modes_used(query: TaskQuery) -> list[str]:
    modes = []
    if query.record_ids or query.working_ids:
        modes.append(QueryMode.exact.value)
    if query.terms:
        modes.append(QueryMode.lexical.value)
    if query.constraints:
        modes.append(QueryMode.structured.value)
    return modes


def _metadata(record: TaskRecord, mode: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "store": mode,
        "status": record.status,
        "short_id": record.short_id,
        "project": record.project,
        "tags": list(record.tags),
        "priority": record.priority,
        "due": record.due.isoformat() if record.due else None,
        "urgency": record.urgency,
        "id": record.working_id,
        "entry": record.entry.isoformat() if record.entry else None,
        "end": record.end.isoformat() if record.end else None,
        "modified": record.modified.isoformat() if record.modified else None,
        "annotations": [
            {"entry": a.entry.isoformat() if a.entry else None, "description": a.description}
            for a in record.annotations
        ],
    }
    if record.file is not None:
        metadata.update({
            "projects": list(record.projects),
            "contexts": list(record.contexts),
            "attributes": dict(record.attributes),
            "file": record.file,
            "line": record.line,
            "unparsed": record.unparsed,
            "end_date_missing": record.end_date_missing or None,
        })
    return {key: value for key, value in metadata.items() if value not in (None, [], {})}

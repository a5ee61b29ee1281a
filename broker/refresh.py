"""Refreshing sources: rebuild or re-check what adapters index, outside any query budget.

A refresh is bounded by its own generous deadline, not the query timeout, so a
large folder finishes its first build instead of failing at two seconds. A caller
watching it (a terminal) is told when each source starts, what work the source
says it has left while it runs (its health, asked every ``WORK_LEFT_EVERY_S``
beside the refresh: the embeddings of a large folder take minutes), and how it ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import anyio

from adapter_sdk.protocol import (
    Capability,
    CheckpointProgress,
    HealthResult,
    RefreshParams,
    SearchOutcome,
)
from broker.config import Config, SourceConfig
from broker.contracts import (
    RefreshOutcome,
    RefreshRequest,
    RefreshResponse,
    RefreshStatus,
    Sensitivity,
    SourceRefresh,
    SourceState,
)
from broker.plan import adapter_spec
from broker.status import source_state
from broker.supervise import AdapterClient, AdapterFailure, Supervisor

REFRESH_TIMEOUT = timedelta(minutes=10)
WORK_LEFT_EVERY_S = 1.0


class RefreshStage(StrEnum):
    started = "started"
    working = "working"  # the source's own account of the work it has left
    ended = "ended"


@dataclass(frozen=True)
class RefreshEvent:
    """One step of one source's refresh. ``text``: for ``working``, the work left as the
    source says it (e.g. "2744 chunks not embedded yet"); for ``ended``, the source's
    status with its reason if any, e.g. "refreshed" or "skipped (checkpoint_unsupported)"."""

    source_id: str
    stage: RefreshStage
    text: str = ""


Progress = Callable[[RefreshEvent], None]


async def refresh(
    config: Config,
    supervisor: Supervisor,
    request: RefreshRequest,
    progress: Progress | None = None,
) -> RefreshResponse:
    clock = time.perf_counter_ns()
    profile = config.profile(request.profile)
    if request.source_id is not None:
        source = config.source(request.source_id)
        if source is None:
            row = SourceRefresh(
                source_id=request.source_id,
                status=RefreshStatus.failed,
                reason="source_not_configured",
            )
            return RefreshResponse(outcome=RefreshOutcome.failed, sources=[row])
        if source.source_id not in profile.sources:
            row = SourceRefresh(
                source_id=source.source_id,
                source_uid=source.source_uid,
                status=RefreshStatus.failed,
                reason="source_not_in_profile",
            )
            return RefreshResponse(outcome=RefreshOutcome.failed, sources=[row])
        members = [source]
    else:
        members = [s for sid in profile.sources if (s := config.source(sid)) is not None]

    rows: list[SourceRefresh | None] = [None] * len(members)

    async def one(index: int, source: SourceConfig) -> None:
        if progress:
            progress(RefreshEvent(source.source_id, RefreshStage.started))
        row = await _refresh_source(config, supervisor, profile.name, source, request.full,
                                    profile.max_sensitivity, progress)
        rows[index] = row
        if progress:
            ended = f"{row.status} ({row.reason})" if row.reason else str(row.status)
            progress(RefreshEvent(source.source_id, RefreshStage.ended, ended))

    async with anyio.create_task_group() as tasks:
        for index, source in enumerate(members):
            tasks.start_soon(one, index, source)
    done = [r for r in rows if r is not None]
    return RefreshResponse(
        outcome=_aggregate(done), sources=done, elapsed_ns=time.perf_counter_ns() - clock
    )


async def _refresh_source(
    config: Config, supervisor: Supervisor, profile: str, source: SourceConfig, full: bool,
    ceiling: Sensitivity, progress: Progress | None = None,
) -> SourceRefresh:
    clock = time.perf_counter_ns()
    row = SourceRefresh(source_id=source.source_id, source_uid=source.source_uid,
                        status=RefreshStatus.skipped)
    if not source.enabled:
        row.reason = "disabled"
        return row
    if source.sensitivity > ceiling:
        row.reason = "sensitivity_denied"
        return row
    client = supervisor.client(adapter_spec(config, profile, source))
    try:
        manifest = await client.initialize()
    except AdapterFailure as failure:
        row.status, row.reason = RefreshStatus.failed, "initialize_failed"
        row.diagnostic_detail = failure.message
        row.elapsed_ns = time.perf_counter_ns() - clock
        return row
    if Capability.checkpoint not in manifest.capabilities:
        row.reason = "checkpoint_unsupported"
        return row
    deadline = datetime.now(UTC) + max(REFRESH_TIMEOUT, timedelta(milliseconds=source.timeout_ms))
    try:
        params = RefreshParams(deadline=deadline, full=full or None)
        if progress is None:
            health = await client.refresh(params)
        else:
            health = await _refresh_reporting_work_left(client, params, source.source_id, progress)
    except AdapterFailure as failure:
        row.status = RefreshStatus.failed
        row.reason = "timeout" if failure.outcome == SearchOutcome.timeout else "refresh_failed"
        row.diagnostic_detail = failure.message
        row.elapsed_ns = time.perf_counter_ns() - clock
        return row
    row.health = health
    row.elapsed_ns = time.perf_counter_ns() - clock
    diagnostics = health.diagnostics or {}
    detail = diagnostics.get("detail") or diagnostics.get("last_refresh_error")
    row.diagnostic_detail = str(detail) if detail else None
    state = source_state(health)  # as every surface states it (broker.status)
    if state == SourceState.healthy:
        row.status = RefreshStatus.refreshed
    elif state == SourceState.degraded:
        advanced = health.checkpoint_progress == CheckpointProgress.advanced
        row.status = RefreshStatus.refreshed if advanced else RefreshStatus.degraded
        row.reason = None if advanced else "unhealthy"
    else:
        row.status, row.reason = RefreshStatus.failed, "unhealthy"
    return row


async def _refresh_reporting_work_left(
    client: AdapterClient, params: RefreshParams, source_id: str, progress: Progress
) -> HealthResult:
    """The source's refresh, telling ``progress`` meanwhile what work the source says it
    has left. A health request is never abandoned: one in flight when the refresh ends is
    waited for (an adapter that answers one request at a time answers it next), since an
    adapter that ignores the cancel of an abandoned request is stopped."""
    refreshed = anyio.Event()
    failure: AdapterFailure | None = None
    async with anyio.create_task_group() as watching:
        watching.start_soon(_report_work_left, client, source_id, progress, params.deadline, refreshed)
        try:
            health = await client.refresh(params)
        except AdapterFailure as exc:  # raised past the group, not inside an exception group
            failure = exc
        finally:
            refreshed.set()
    if failure is not None:
        raise failure
    return health


async def _report_work_left(
    client: AdapterClient, source_id: str, progress: Progress, deadline: datetime, refreshed: anyio.Event
) -> None:
    """Every ``WORK_LEFT_EVERY_S`` until ``refreshed``, ask the source's health and pass on
    its account of the work left; a source that gives none is not reported."""
    while True:
        with anyio.move_on_after(WORK_LEFT_EVERY_S):
            await refreshed.wait()
        if refreshed.is_set():
            return
        try:
            health = await client.health(deadline)
        except AdapterFailure:
            continue  # the refresh itself says what went wrong
        detail = (health.diagnostics or {}).get("detail")
        if isinstance(detail, str) and detail and not refreshed.is_set():
            progress(RefreshEvent(source_id, RefreshStage.working, detail))


def _aggregate(rows: list[SourceRefresh]) -> RefreshOutcome:
    statuses = {r.status for r in rows}
    if not statuses & {RefreshStatus.refreshed, RefreshStatus.degraded}:
        return RefreshOutcome.failed
    if statuses & {RefreshStatus.degraded, RefreshStatus.failed}:
        return RefreshOutcome.degraded
    return RefreshOutcome.refreshed

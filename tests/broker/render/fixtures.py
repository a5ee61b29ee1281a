"""Hand-built broker responses with fixed times, for rendering and shaping tests.

Every factory returns a fresh object, so a test may change what it receives.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from broker.contracts import (
    Candidate,
    Corroboration,
    Coverage,
    ExcerptKind,
    ExpandResponse,
    Explanation,
    Freshness,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    MatchSignal,
    Member,
    OmittedPart,
    Outcome,
    Plan,
    PlanSource,
    Prior,
    QueryResponse,
    RefreshOutcome,
    RefreshResponse,
    RefreshStatus,
    RelevanceBasis,
    Result,
    SearchOutcome,
    Sensitivity,
    SourceRefresh,
    SourceReport,
    SourcesResponse,
    SourceSummary,
    Suppression,
    SuppressionReason,
    TemporalExplanation,
    TimeoutBudget,
    TimeoutDetail,
    Verdict,
)

MS = 1_000_000
DEADLINE = datetime(2026, 3, 4, 5, 6, 12, tzinfo=UTC)
EVALUATED = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
OBSERVED = datetime(2026, 3, 1, 9, 30, 0, tzinfo=UTC)

SOURCE_UIDS = {
    "notes": "01UIDNOTES",
    "tasks": "01UIDTASKS",
    "mail": "01UIDMAIL",
    "events": "01UIDEVENTS",
    "slow": "01UIDSLOW",
    "flaky": "01UIDFLAKY",
    "archive": "01UIDARCHIVE",
    "remote": "01UIDREMOTE",
    "tracker": "01UIDTRACKER",
}
PRIORS = {"notes": 1.2, "tasks": 1.0, "mail": 0.8, "events": 1.0}


def candidate(
    locator: str,
    *,
    title: str = "",
    excerpt: str | None = None,
    kind: ExcerptKind | None = None,
    local_rank: int = 1,
    record_type: str = "document",
    signals: tuple[MatchSignal, ...] = (MatchSignal.lexical,),
    **fields: Any,
) -> Candidate:
    source_id, local = locator.split(":", 1)
    values: dict[str, Any] = {
        "candidate_id": f"{local}#1",
        "source_uid": SOURCE_UIDS[source_id],
        "source_id": source_id,
        "source_record_id": local.split("#", 1)[0],
        "locator": locator,
        "record_type": record_type,
        "title": title,
        "excerpt": excerpt,
        "excerpt_kind": kind,
        "local_rank": local_rank,
        "match_signals": list(signals),
        "sensitivity": Sensitivity.internal,
    }
    return Candidate(**(values | fields))


def lineage_root(c: Candidate) -> str:
    return c.persisted_locator


def result(
    primary: Candidate,
    *,
    also: tuple[Candidate, ...] = (),
    exact: bool = False,
    pool: int = 3,
    relevance: float | None = None,
    verdict: Verdict | None = None,
    temporal: TemporalExplanation | None = None,
    freshness: Freshness | None = None,
) -> Result:
    prior = PRIORS.get(primary.source_id, 1.0)
    scale = 1.0 if relevance is None else relevance
    score = round(prior * scale / (60 + primary.local_rank), 7)
    members = [Member(lineage_root=lineage_root(c), candidates=[c]) for c in (primary, *also)]
    units = len(members)
    sources = sorted({c.source_id for c in (primary, *also)})
    return Result(
        primary=primary,
        members=members,
        explanation=Explanation(
            source_uid=primary.source_uid,
            source_id=primary.source_id,
            local_rank=primary.local_rank,
            local_pool_size=pool,
            match_signals=list(primary.match_signals or []),
            prior=Prior(base=prior, intent=0.0, effective=prior),
            relevance=relevance,
            lineage_root=lineage_root(primary),
            corroboration=Corroboration(
                independent_units=units, sources=sources, cap=2.0, cap_applied=units > 2
            ),
            freshness=freshness or Freshness(mode="indexed", as_of_honored="filter"),
            exact_promoted=exact,
            score=score,
            temporal=temporal,
        ),
        score=score * min(units, 2),
        verdict=verdict,
    )


def report(
    source_id: str,
    outcome: SearchOutcome = SearchOutcome.success,
    *,
    reason: str | None = None,
    candidates: int = 0,
    elapsed_ms: int = 0,
    timeout: TimeoutDetail | None = None,
    **fields: Any,
) -> SourceReport:
    return SourceReport(
        source_uid=SOURCE_UIDS[source_id],
        source_id=source_id,
        outcome=outcome,
        reason=reason,
        candidates=candidates,
        elapsed_ns=elapsed_ms * MS,
        timeout=timeout,
        **fields,
    )


def plan(*source_ids: str, ineligible: dict[str, str] | None = None) -> Plan:
    ineligible = ineligible or {}
    sources = [
        PlanSource(
            source_uid=SOURCE_UIDS[sid],
            source_id=sid,
            relevance_basis=None if sid in ineligible else RelevanceBasis.lexical_span,
            eligible=sid not in ineligible,
            reason=ineligible.get(sid),
            limit=0 if sid in ineligible else 20,
            timeout_ns=0 if sid in ineligible else 1975 * MS,
            prior=PRIORS.get(sid, 1.0),
        )
        for sid in source_ids
    ]
    return Plan(
        profile="work",
        sources=sources,
        deadline=DEADLINE,
        fusion_reserve_ns=25 * MS,
        limit=20,
        relevance_floor=0.1,
    )


# ---------------------------------------------------------------------------
# Results


def restore_drill() -> Result:
    """Matched excerpt, corroborated by a second independent record."""
    return result(
        candidate(
            "notes:runbooks/restore.md#L3-L9",
            title="Restore Runbook > Quarterly Drill",
            excerpt="Each quarter the newest snapshot is restored to a scratch volume "
            "and checksums compared.",
            kind=ExcerptKind.matched,
            source_revision="git:abc123",
            observed_at=OBSERVED,
            metadata={"chunk_count": 3, "heading": "Quarterly Drill"},
        ),
        also=(
            candidate(
                "tasks:42",
                title="Run the quarterly restore drill",
                record_type="task",
                local_rank=2,
            ),
        ),
        relevance=0.64,
        pool=7,
        freshness=Freshness(
            mode="indexed",
            source_revision="git:abc123",
            index_generation="gen-000004",
            index_config="fts5-porter",
            observed_at=OBSERVED,
            as_of_honored="filter",
        ),
    )


def spec_preview() -> Result:
    """Exact identifier hit whose excerpt is a preview (nothing in its text matched)."""
    return result(
        candidate(
            "notes:spec.md#L1-L12",
            title="Specification",
            excerpt="Opening paragraph of the document, shown because no text matched.",
            kind=ExcerptKind.preview,
            local_rank=2,
            signals=(MatchSignal.exact_identifier,),
        ),
        exact=True,
    )


def backups_unclaimed() -> Result:
    """An excerpt whose source claimed neither matched nor preview."""
    return result(
        candidate(
            "mail:thread-17f3",
            title="Re: Backup retention",
            excerpt="Snapshots are kept for ninety days;\nthe drill task rotates owners.",
            record_type="thread",
            event_time=OBSERVED,
        )
    )


def superseded_decision() -> Result:
    """A stale result shown because the request asked for stale evidence."""
    return result(
        candidate(
            "notes:decisions/backups.md#L12-L20",
            title="Backup Decisions > Retention (2024)",
            excerpt="Snapshots are kept for thirty days.",
            kind=ExcerptKind.matched,
            local_rank=3,
            valid_from=datetime(2024, 1, 1, tzinfo=UTC),
        ),
        verdict=Verdict.superseded,
        temporal=TemporalExplanation(
            verdict=Verdict.superseded,
            evaluated_at=EVALUATED,
            valid_from=datetime(2024, 1, 1, tzinfo=UTC),
            superseded_by="notes:decisions/backups-2026.md#L1-L8",
            note="supersession dated 2026-01-15",
        ),
    )


def expired_event() -> Result:
    return result(
        candidate(
            "events:belief/backup.retention#ev-9",
            title="backup.retention = 30d",
            record_type="belief",
            valid_to=datetime(2025, 12, 31, tzinfo=UTC),
        ),
        verdict=Verdict.expired,
        temporal=TemporalExplanation(
            verdict=Verdict.expired,
            evaluated_at=EVALUATED,
            valid_to=datetime(2025, 12, 31, tzinfo=UTC),
        ),
    )


# ---------------------------------------------------------------------------
# Responses


def answered() -> QueryResponse:
    """All three excerpt markers, exact and corroborated, complete coverage."""
    return QueryResponse(
        results=[restore_drill(), spec_preview(), backups_unclaimed()],
        source_outcomes=[
            report(
                "notes",
                candidates=7,
                elapsed_ms=9,
                source_watermark="w-000123",
                index_generation="gen-000004",
            ),
            report("tasks", candidates=2, elapsed_ms=31, diagnostics={"task_count": 118}),
            report("mail", candidates=1, elapsed_ms=240, cold_start_ns=180 * MS),
        ],
        plan=plan("notes", "tasks", "mail"),
        suppressed=[
            Suppression(
                reason=SuppressionReason.below_relevance_floor,
                count=1,
                lineage_root="01UIDNOTES:misc/glossary.md#L1-L4",
            )
        ],
        outcome=Outcome.answered,
        coverage=Coverage.complete,
        elapsed_ns=14 * MS + 400_000,
    )


def degraded() -> QueryResponse:
    """Sources that could not answer, each timeout attributed to the budget that ended it."""
    source_timeout = TimeoutDetail(
        budget=TimeoutBudget.source_timeout, limit_ns=1500 * MS, deadline=DEADLINE
    )
    request_latency = TimeoutDetail(
        budget=TimeoutBudget.request_latency, limit_ns=5000 * MS, deadline=DEADLINE
    )
    return QueryResponse(
        results=[restore_drill(), backups_unclaimed()],
        source_outcomes=[
            report("notes", candidates=7, elapsed_ms=9),
            report(
                "slow",
                SearchOutcome.timeout,
                reason="timeout",
                elapsed_ms=1500,
                timeout=source_timeout,
            ),
            report(
                "tracker",
                SearchOutcome.timeout,
                reason="timeout",
                elapsed_ms=4975,
                timeout=request_latency,
            ),
            report(
                "remote",
                SearchOutcome.timeout,
                reason="timeout",
                elapsed_ms=800,
                timeout=TimeoutDetail(budget=TimeoutBudget.caller_deadline, deadline=DEADLINE),
            ),
            report(
                "archive",
                SearchOutcome.timeout,
                elapsed_ms=120,
                timeout=TimeoutDetail(budget=TimeoutBudget.adapter_internal),
            ),
            report("tasks", SearchOutcome.unavailable, reason="unreachable"),
            report("flaky", SearchOutcome.partial, candidates=2, elapsed_ms=60),
            report("mail", SearchOutcome.skipped, reason="sensitivity_ceiling"),
            report("events", SearchOutcome.skipped, reason="as_of_unsupported"),
        ],
        plan=plan(
            "notes",
            "slow",
            "tracker",
            "remote",
            "archive",
            "tasks",
            "flaky",
            "mail",
            "events",
            ineligible={"mail": "sensitivity_ceiling", "events": "as_of_unsupported"},
        ),
        outcome=Outcome.answered,
        coverage=Coverage.degraded,
        elapsed_ns=1503 * MS,
    )


def abstained() -> QueryResponse:
    return QueryResponse(
        source_outcomes=[report("notes", elapsed_ms=1), report("tasks", elapsed_ms=2)],
        plan=plan("notes", "tasks"),
        outcome=Outcome.abstained,
        coverage=Coverage.complete,
        elapsed_ns=2 * MS,
    )


def failed() -> QueryResponse:
    return QueryResponse(
        source_outcomes=[
            report(
                "notes",
                SearchOutcome.failed,
                reason="failed",
                elapsed_ms=3,
                diagnostics={"exit_status": 2},
            ),
            report("tasks", SearchOutcome.unavailable, reason="unreachable"),
        ],
        plan=plan("notes", "tasks"),
        outcome=Outcome.failed,
        coverage=Coverage.degraded,
        elapsed_ns=5 * MS,
    )


def truncated() -> QueryResponse:
    """Trailing results dropped by limit and budget; the last kept one compressed."""
    compressed_spec = spec_preview()
    compressed_spec = compressed_spec.model_copy(
        update={
            "primary": compressed_spec.primary.model_copy(
                update={"excerpt": None, "excerpt_kind": None}
            ),
            "members": [],
        }
    )
    return QueryResponse(
        results=[restore_drill(), compressed_spec],
        source_outcomes=[report("notes", candidates=12, elapsed_ms=9)],
        plan=plan("notes"),
        outcome=Outcome.answered,
        coverage=Coverage.complete,
        truncated=True,
        dropped_results=5,
        elapsed_ns=11 * MS,
    )


def truncated_to_nothing() -> QueryResponse:
    return QueryResponse(
        source_outcomes=[report("notes", candidates=4, elapsed_ms=9)],
        plan=plan("notes"),
        outcome=Outcome.answered,
        coverage=Coverage.complete,
        truncated=True,
        dropped_results=4,
        elapsed_ns=9 * MS,
    )


def withheld() -> QueryResponse:
    """Every kind of suppression, the temporal ones with their lineage and successor."""
    shown = restore_drill()
    return QueryResponse(
        results=[shown],
        source_outcomes=[
            report("notes", candidates=6, elapsed_ms=8),
            report("events", candidates=3, elapsed_ms=22),
        ],
        plan=plan("notes", "events"),
        suppressed=[
            Suppression(reason=SuppressionReason.sensitivity, count=2),
            Suppression(
                reason=SuppressionReason.duplicate_view,
                count=1,
                lineage_root="01UIDTASKS:42",
                fused_into=shown.explanation.lineage_root,
            ),
            Suppression(
                reason=SuppressionReason.expired,
                count=1,
                lineage_root="01UIDEVENTS:belief/backup.retention#ev-9",
            ),
            Suppression(
                reason=SuppressionReason.not_yet_valid,
                count=1,
                lineage_root="01UIDNOTES:plans/2027.md#L1-L6",
            ),
            Suppression(
                reason=SuppressionReason.superseded,
                count=2,
                lineage_root="01UIDNOTES:decisions/backups.md#L12-L20",
                successor="notes:decisions/backups-2026.md#L1-L8",
            ),
        ],
        outcome=Outcome.answered,
        coverage=Coverage.complete,
        elapsed_ns=23 * MS,
    )


def stale_shown() -> QueryResponse:
    """``include_stale``: stale results shown, marked with their verdicts."""
    return QueryResponse(
        results=[restore_drill(), superseded_decision(), expired_event()],
        source_outcomes=[
            report("notes", candidates=5, elapsed_ms=7),
            report("events", candidates=2, elapsed_ms=19),
        ],
        plan=plan("notes", "events").model_copy(update={"evaluated_at": EVALUATED}),
        temporal_problems=[
            "supersession cycle between notes:a.md#L1-L3, notes:b.md#L1-L3: all left current"
        ],
        outcome=Outcome.answered,
        coverage=Coverage.complete,
        elapsed_ns=20 * MS,
    )


def summarized() -> QueryResponse:
    """A ledger the response budget replaced with its summary."""
    return QueryResponse(
        results=[backups_unclaimed()],
        source_outcomes=None,
        source_summary=SourceSummary(
            sources=4,
            outcomes={"success": 2, "timeout": 1, "unavailable": 1},
            degraded=["slow (timeout: source timeout 1.5s)", "tasks (unreachable)"],
        ),
        plan=plan(),
        omitted=[OmittedPart.source_outcomes, OmittedPart.plan_sources],
        outcome=Outcome.answered,
        coverage=Coverage.degraded,
        truncated=True,
        dropped_results=3,
        elapsed_ns=1504 * MS,
    )


RESPONSES = {
    "answered": answered,
    "degraded": degraded,
    "abstained": abstained,
    "failed": failed,
    "truncated": truncated,
    "truncated_to_nothing": truncated_to_nothing,
    "withheld": withheld,
    "stale_shown": stale_shown,
    "summarized": summarized,
}


# ---------------------------------------------------------------------------
# Expand, refresh, sources


def expansion(*, truncated: bool = False) -> ExpandResponse:
    return ExpandResponse(
        content="# Quarterly Drill\n\nEach quarter the newest snapshot is restored.\n",
        source_revision="git:abc123",
        truncated=truncated,
        truncation_boundary="recall_sanitize_limit" if truncated else None,
        provenance="notes:runbooks/restore.md",
    )


def refresh() -> RefreshResponse:
    return RefreshResponse(
        outcome=RefreshOutcome.degraded,
        sources=[
            SourceRefresh(
                source_id="notes",
                source_uid="01UIDNOTES",
                status=RefreshStatus.refreshed,
                health=HealthResult(
                    status=HealthStatus.healthy,
                    checked_at=EVALUATED,
                    coverage=IndexCoverage.complete,
                    index_generation="gen-000005",
                    source_watermark="w-000124",
                    index_watermark="w-000124",
                ),
                elapsed_ns=59 * MS,
            ),
            SourceRefresh(
                source_id="tasks",
                source_uid="01UIDTASKS",
                status=RefreshStatus.failed,
                reason="refresh_failed",
                diagnostic_detail="task export exited 2",
                elapsed_ns=12 * MS,
            ),
            SourceRefresh(
                source_id="mail",
                source_uid="01UIDMAIL",
                status=RefreshStatus.skipped,
                reason="checkpoint_unsupported",
            ),
        ],
        elapsed_ns=61 * MS,
    )


def listing() -> SourcesResponse:
    """``recall sources`` over four sources: disabled, above the ceiling, healthy, unusable."""
    return SourcesResponse.model_validate({
        "profile": "work",
        "max_sensitivity": "internal",
        "status": "degraded",
        "sources": [
            {
                "source_uid": "01UIDARCHIVE",
                "source_id": "archive",
                "adapter": "notes",
                "enabled": False,
                "in_profile": False,
                "sensitivity": "internal",
                "permitted": True,
                "base_prior": 1.0,
                "timeout_ms": 2000,
                "probed": False,
                "status": "disabled",
            },
            {
                "source_uid": "01UIDMAIL",
                "source_id": "mail",
                "adapter": "gmail",
                "enabled": True,
                "in_profile": True,
                "sensitivity": "confidential",
                "permitted": False,
                "freshness_mode": "live",
                "base_prior": 0.8,
                "timeout_ms": 4000,
                "probed": False,
                "status": "not_probed",
            },
            {
                "source_uid": "01UIDNOTES",
                "source_id": "notes",
                "adapter": "notes",
                "enabled": True,
                "in_profile": True,
                "location": "/home/ana/notes",
                "sensitivity": "internal",
                "permitted": True,
                "freshness_mode": "indexed",
                "freshness_policy": "incremental on every query",
                "base_prior": 1.2,
                "intent_priors": {"reference": 1.5},
                "record_types": ["document"],
                "timeout_ms": 1500,
                "probed": True,
                "status": "healthy",
                "adapter_id": "recall-notes/0.1.0",
                "display_name": "Markdown notes",
                "capabilities": ["search", "expand", "checkpoint"],
                "query_modes": ["exact", "lexical"],
                "as_of_support": "filter",
                "health": {
                    "status": "healthy",
                    "checked_at": "2026-03-04T05:06:07.250Z",
                    "coverage": "complete",
                    "source_watermark": "w-000123",
                    "index_generation": "gen-000004",
                    "index_config": "fts5-porter",
                    "record_count": 12,
                    "indexed_count": 12,
                    "diagnostics": {
                        "declined_files": [
                            {"path": "scans/receipt.pdf", "reason": "not a text note",
                             "fix": "add it to the source's exclude setting"},
                            {"path": "dump.md", "reason": "over the 2 MiB size cap", "fix": "raise max_file_bytes"},
                        ],
                        "files": 12,
                    },
                },
            },
            {
                "source_uid": "01UIDTASKS",
                "source_id": "tasks",
                "adapter": "tasks",
                "enabled": True,
                "in_profile": True,
                "sensitivity": "internal",
                "permitted": True,
                "base_prior": 1.0,
                "timeout_ms": 2000,
                "probed": True,
                "status": "unavailable",
                "adapter_id": "recall-tasks/0.1.0",
                "display_name": "Taskwarrior",
                "capabilities": ["search", "expand"],
                "query_modes": ["exact", "lexical"],
                "as_of_support": "none",
                "executable_requirements": [
                    {"name": "task", "command": "task"},
                    {"name": "taskwarrior", "command": "/usr/bin/task"},
                ],
                "health": {
                    "status": "unavailable",
                    "checked_at": "2026-03-04T05:06:07Z",
                    "coverage": "unknown",
                    "diagnostics": {"detail": "task: command not found"},
                },
                "error": "executable task not found on PATH",
            },
        ],
    })

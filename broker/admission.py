"""Admitting what a source answered: identity stamped, trust assigned, failures typed.

The broker, not the adapter, decides who a candidate belongs to and how
sensitive it is: the source part of every locator is overwritten with the
configured ``source_id`` (an adapter cannot speak for another source), the
sensitivity is raised to the source's floor (never lowered), and candidates
above the profile's ceiling are dropped and counted. A record of a source a
project file added may not reach into the user's own sources: its
``derived_from`` edges and ``supersedes`` / ``superseded_by`` references naming
one of them are dropped and counted, so a cloned repository's notes cannot
withhold the user's evidence as superseded or fold it into their lineage.
Text fields are sanitized here, before anything ranks or renders them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from adapter_sdk.protocol import AdapterSkipReason, SearchOutcome, SearchResult, Sensitivity
from adapter_sdk.protocol import Candidate as WireCandidate
from broker.contracts import Candidate, SkipReason, SourceReport, TimeoutBudget, TimeoutDetail
from broker.sanitize import (
    EXCERPT_CHARS,
    LOCATOR_LOCAL_CHARS,
    TITLE_CHARS,
    bound,
    clean_line,
    clean_metadata,
    clean_text,
)
from broker.supervise import AdapterFailure, FailureReason

_FAILURE_REASONS = {
    FailureReason.deadline_exceeded: SkipReason.timeout,
    FailureReason.deadline_exceeded_unresponsive: SkipReason.timeout,
    FailureReason.handshake_timeout: SkipReason.timeout,
    FailureReason.cancelled: SkipReason.cancelled,
    FailureReason.unreachable: SkipReason.unreachable,
    FailureReason.spawn_failed: SkipReason.unreachable,
    FailureReason.protocol_version_unsupported: SkipReason.unreachable,
    FailureReason.denied: SkipReason.denied,
    FailureReason.as_of_unsupported: SkipReason.as_of_unsupported,
    FailureReason.budget_exceeded: SkipReason.budget_exceeded,
}


_FAILURE_OUTCOMES = frozenset(
    {SearchOutcome.timeout, SearchOutcome.unavailable, SearchOutcome.denied, SearchOutcome.failed}
)
REFERENCE_KEYS = ("supersedes", "superseded_by")
FOREIGN_DROPPED = "dropped_references_to_protected_sources"


@dataclass
class Admitted:
    """One source's search after admission: its report, the candidates kept, how many were above the ceiling."""

    report: SourceReport
    candidates: list[Candidate]
    above_ceiling: int


def admit(
    result: SearchResult,
    *,
    source_uid: str,
    source_id: str,
    floor: Sensitivity,
    ceiling: Sensitivity,
    elapsed_ns: int,
    protected: Collection[str] = (),
    project_file: str | None = None,
) -> Admitted:
    """``protected``: source ids this source's records may not reference (see the module);
    ``project_file``: the project file that added the source, stamped on each candidate."""
    report = SourceReport(
        source_uid=source_uid,
        source_id=source_id,
        outcome=result.outcome,
        elapsed_ns=elapsed_ns,
        source_watermark=result.source_watermark,
        diagnostics=result.diagnostics or None,
    )
    if result.outcome == SearchOutcome.skipped:
        stated = result.reason if result.reason in AdapterSkipReason.__members__ else None
        report.reason = stated or SkipReason.skip_unstated
        return Admitted(report, [], 0)
    if result.outcome not in (SearchOutcome.success, SearchOutcome.partial):
        # an adapter that reports its own failure in a result keeps that outcome
        report.reason = str(result.outcome)
        if result.outcome == SearchOutcome.timeout:
            report.timeout = TimeoutDetail(budget=TimeoutBudget.adapter_internal)
        return Admitted(report, [], 0)

    admitted: list[Candidate] = []
    above_ceiling = 0
    malformed = 0
    foreign = 0
    for wire in result.candidates or []:
        candidate = stamp(
            wire, source_uid=source_uid, source_id=source_id, floor=floor, project_file=project_file
        )
        if candidate is not None and protected:
            foreign += drop_references(candidate, protected)
        if candidate is None:
            malformed += 1
        elif candidate.sensitivity > ceiling:
            above_ceiling += 1
        else:
            admitted.append(candidate)
    if malformed:
        report.outcome = SearchOutcome.partial
        report.diagnostics = {**(report.diagnostics or {}), "dropped_malformed_candidates": malformed}
    if foreign:
        report.diagnostics = {**(report.diagnostics or {}), FOREIGN_DROPPED: foreign}
    report.candidates = len(admitted)
    return Admitted(report, admitted, above_ceiling)


def stamp(
    wire: WireCandidate,
    *,
    source_uid: str,
    source_id: str,
    floor: Sensitivity,
    project_file: str | None = None,
) -> Candidate | None:
    """The broker's view of an adapter's candidate, or None if it cannot be addressed."""
    local = wire.locator.split(":", 1)[1] if ":" in wire.locator else ""
    if not local.strip():
        return None
    # every part is checked: the wire candidate on receipt, the rest computed here
    return Candidate.model_construct(
        candidate_id=wire.candidate_id,
        source_uid=source_uid,
        source_id=source_id,
        source_record_id=wire.source_record_id,
        locator=f"{source_id}:{bound(clean_line(local, LOCATOR_LOCAL_CHARS), LOCATOR_LOCAL_CHARS)}",
        derived_from=wire.derived_from,
        record_type=wire.record_type,
        title=clean_line(wire.title, TITLE_CHARS),
        excerpt=bound(clean_text(wire.excerpt), EXCERPT_CHARS) if wire.excerpt else None,
        excerpt_kind=wire.excerpt_kind if wire.excerpt else None,
        local_rank=wire.local_rank,
        local_score=wire.local_score,
        relevance=wire.relevance,
        match_signals=wire.match_signals,
        observed_at=wire.observed_at,
        confirmed_at=wire.confirmed_at,
        event_time=wire.event_time,
        valid_from=wire.valid_from,
        valid_to=wire.valid_to,
        source_revision=wire.source_revision,
        sensitivity=max(floor, wire.sensitivity, key=lambda s: s.level),
        metadata=clean_metadata(wire.metadata) if wire.metadata else None,
        content_fingerprint=wire.content_fingerprint,
        project_file=project_file,
    )


def drop_references(candidate: Candidate, protected: Collection[str]) -> int:
    """Remove the candidate's references into ``protected`` sources; how many went."""

    def names_protected(reference: Any) -> bool:
        return isinstance(reference, str) and reference.partition(":")[0] in protected

    dropped = 0
    if candidate.derived_from:
        kept = [r for r in candidate.derived_from if not names_protected(r)]
        dropped += len(candidate.derived_from) - len(kept)
        candidate.derived_from = kept or None
    for key in REFERENCE_KEYS:
        value = (candidate.metadata or {}).get(key)
        references = [value] if isinstance(value, str) else value
        if not isinstance(references, list):
            continue
        kept = [r for r in references if not names_protected(r)]
        if len(kept) == len(references):
            continue
        dropped += len(references) - len(kept)
        assert candidate.metadata is not None
        if kept:
            candidate.metadata[key] = kept
        else:
            del candidate.metadata[key]
    return dropped


def failure_report(
    failure: AdapterFailure,
    *,
    source_uid: str,
    source_id: str,
    elapsed_ns: int,
    timeout_budget: TimeoutBudget,
    timeout_limit_ns: int,
    deadline: datetime,
) -> SourceReport:
    """A search that raised: its outcome, machine reason and, for timeouts, whose budget ran out."""
    reason = _FAILURE_REASONS.get(failure.reason, SkipReason.failed)
    outcome = failure.outcome
    if reason == SkipReason.cancelled or outcome not in _FAILURE_OUTCOMES:
        outcome = SearchOutcome.failed  # an error never reads as an answer, whole or partial
    report = SourceReport(
        source_uid=source_uid,
        source_id=source_id,
        outcome=outcome,
        reason=reason,
        elapsed_ns=elapsed_ns,
        diagnostics={"failure": failure.reason, "detail": clean_line(failure.message, 400)},
    )
    if outcome == SearchOutcome.timeout:
        report.timeout = TimeoutDetail(
            budget=timeout_budget, limit_ns=timeout_limit_ns, deadline=deadline
        )
    return report

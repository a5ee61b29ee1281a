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
Text fields are sanitized here, before anything ranks or renders them; a
locator is never rewritten: one that cannot be kept exact (a control character,
longer than a locator may be) is refused. Each malformed candidate, refused
here or on the wire (:mod:`broker.supervise.answer`), is dropped, counted and
named in the source's diagnostics, and makes its outcome partial; the rest of
the answer stands.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from adapter_sdk.protocol import AdapterSkipReason, SearchOutcome, SearchResult, Sensitivity
from adapter_sdk.protocol import Candidate as WireCandidate
from broker.contracts import Candidate, SkipReason, SourceReport, TimeoutBudget, TimeoutDetail
from broker.locator import MAX_LOCATOR_CHARS
from broker.sanitize import (
    EXCERPT_CHARS,
    TITLE_CHARS,
    bound,
    clean_line,
    clean_metadata,
    clean_text,
    identifier_problem,
)
from broker.supervise import MALFORMED_NAMED, AdapterFailure, FailureReason, MalformedCandidate

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
MALFORMED_DROPPED = "dropped_malformed_candidates"
"""Diagnostics key: how many candidates were dropped as malformed."""
MALFORMED_LISTED = "malformed_candidates"
"""Diagnostics key: the first :data:`MALFORMED_NAMED` of them, each named and why."""


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
    malformed: Sequence[MalformedCandidate] = (),
) -> Admitted:
    """``protected``: source ids this source's records may not reference (see the module);
    ``project_file``: the project file that added the source, stamped on each candidate;
    ``malformed``: the candidates already dropped on the wire."""
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
    dropped = list(malformed)
    foreign = 0
    for wire in result.candidates or []:
        candidate = stamp(
            wire, source_uid=source_uid, source_id=source_id, floor=floor, project_file=project_file
        )
        if isinstance(candidate, MalformedCandidate):
            dropped.append(candidate)
            continue
        if protected:
            foreign += drop_references(candidate, protected)
        if candidate.sensitivity > ceiling:
            above_ceiling += 1
        else:
            admitted.append(candidate)
    if dropped:
        report.outcome = SearchOutcome.partial
        report.diagnostics = {
            **(report.diagnostics or {}),
            MALFORMED_DROPPED: len(dropped),
            MALFORMED_LISTED: [d.to_json() for d in dropped[:MALFORMED_NAMED]],
        }
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
) -> Candidate | MalformedCandidate:
    """The broker's view of an adapter's candidate, or why it cannot be addressed."""
    locator = f"{source_id}:{wire.locator.partition(':')[2]}"
    why = locator_problem(locator)
    if why is not None:
        return MalformedCandidate(
            why=f"locator: {why}", locator=wire.locator, candidate_id=wire.candidate_id
        )
    # every part is checked: the wire candidate on receipt, the rest computed here
    admitted = wire.model_copy(
        update={
            "source_uid": None,  # the identity is stamped beside the record, never in it
            "source_id": None,
            "locator": locator,
            "title": clean_line(wire.title, TITLE_CHARS),
            "excerpt": bound(clean_text(wire.excerpt), EXCERPT_CHARS) if wire.excerpt else None,
            "excerpt_kind": wire.excerpt_kind if wire.excerpt else None,
            "sensitivity": max(floor, wire.sensitivity, key=lambda s: s.level),
            "metadata": _admitted_metadata(wire.metadata) if wire.metadata else None,
        }
    )
    return Candidate.model_construct(
        wire=admitted, source_uid=source_uid, source_id=source_id, project_file=project_file
    )


def _admitted_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata cleaned as text, but for the references to other records: locators, kept
    exact or left out (one rewritten would name no record)."""
    cleaned = clean_metadata(metadata)
    for key in REFERENCE_KEYS:
        if key not in cleaned:
            continue
        value = metadata[key]
        references = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        exact = [r for r in references if _exact_reference(r)]
        if not exact:
            del cleaned[key]
        else:
            cleaned[key] = exact[0] if isinstance(value, str) else exact
    return cleaned


def _exact_reference(reference: Any) -> bool:
    return isinstance(reference, str) and ":" in reference and locator_problem(reference) is None


def locator_problem(locator: str) -> str | None:
    """Why ``locator`` (the source part stamped) cannot be printed exactly as ``recall
    expand`` takes it back, or None: it is kept as it is or refused, never rewritten."""
    local = locator.partition(":")[2]
    if not local.strip():
        return "its local part is empty"
    if len(locator) > MAX_LOCATOR_CHARS:
        return f"it is longer than {MAX_LOCATOR_CHARS} characters"
    return identifier_problem(local)


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

"""The per-source ledger reduced to what a reader must not miss: which sources could not answer.

One definition serves every surface, so no surface can fall silent about a
source another one names.
"""

from __future__ import annotations

from collections import Counter

from broker.contracts import (
    QueryResponse,
    SourceReport,
    SourceSummary,
    TimeoutBudget,
    TimeoutDetail,
)
from broker.render.text import duration_text


def _timeout_suffix(report: SourceReport) -> str:
    detail = report.timeout
    if detail is None:
        return ""
    budget = _budget_text(detail)
    return f"{budget}; {detail.catching_up}" if detail.catching_up else budget


def _budget_text(detail: TimeoutDetail) -> str:
    limit = f" {duration_text(detail.limit_ns)}" if detail.limit_ns is not None else ""
    match detail.budget:
        case TimeoutBudget.request_latency:
            return f": request latency budget{limit}"
        case TimeoutBudget.source_timeout:
            return f": source timeout{limit}"
        case TimeoutBudget.caller_deadline:
            return ": caller deadline"
        case TimeoutBudget.adapter_internal:
            return ": adapter-internal deadline"
    return ""


def degraded_report_entries(reports: list[SourceReport] | None) -> list[str]:
    """``"<source_id> (<reason or outcome><timeout suffix>)"`` for every degrading report."""
    entries = []
    for report in reports or ():
        if report.degrades:
            cause = report.reason or str(report.outcome)
            entries.append(f"{report.source_id} ({cause}{_timeout_suffix(report)})")
    return entries


def degraded_entries(response: QueryResponse) -> list[str]:
    """The degraded sources, from the ledger or from the summary standing in for it."""
    if not response.source_outcomes and response.source_summary is not None:
        return list(response.source_summary.degraded)
    return degraded_report_entries(response.source_outcomes)


def summarize_sources(reports: list[SourceReport]) -> SourceSummary:
    counts = Counter(str(report.outcome) for report in reports)
    return SourceSummary(
        sources=len(reports),
        outcomes={outcome: counts[outcome] for outcome in sorted(counts)},
        degraded=degraded_report_entries(reports),
    )


def response_summary(response: QueryResponse) -> SourceSummary | None:
    """The summary a response states: the one shaping left, else one built from the ledger."""
    if response.source_summary is not None:
        return response.source_summary
    if response.source_outcomes:
        return summarize_sources(response.source_outcomes)
    return None

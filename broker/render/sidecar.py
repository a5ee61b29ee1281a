"""Text the Sidecar plugin shows for a query page: bounded one-line strings, notices, row status.

Every outbound string is one line and bounded in characters, because the host
truncates rather than refuses and a multi-line source string could imitate the
page around it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from broker.contracts import Outcome, QueryResponse, Result, SearchOutcome, Verdict
from broker.render.ledger import degrades, response_summary

NOTICE_CHARS = 200
MAX_NOTICES = 4
_LINE_BREAKS = str.maketrans({"\r": " ", "\n": " ", "\t": " "})


def bounded(text: str, limit: int) -> str:
    """``text`` on one line, trimmed, cut to ``limit`` characters ending in ``…`` if cut."""
    line = text.translate(_LINE_BREAKS).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True)
class Notice:
    tone: str  # danger | warning | info
    text: str


@dataclass(frozen=True)
class RowStatus:
    label: str
    tone: str


def _source_name(entry: str) -> str:
    return entry.split(" (", 1)[0]


def _coverage_notice(response: QueryResponse) -> Notice | None:
    reports = response.source_outcomes or []
    summary = response_summary(response)
    if response.outcome == Outcome.failed:
        asked = [r.source_id for r in reports if r.outcome != SearchOutcome.skipped]
        if not asked and summary is not None:
            asked = [_source_name(entry) for entry in summary.degraded]
        return Notice("danger", f"every source recall asked failed: {', '.join(asked)}")
    if reports:
        names = [r.source_id for r in reports if degrades(r)]
        total = len(reports)
    elif summary is not None:
        names = [_source_name(entry) for entry in summary.degraded]
        total = summary.sources
    else:
        return None
    if not names:
        return None
    return Notice("warning", f"{len(names)} of {total} sources did not answer ({', '.join(names)})")


def query_notices(response: QueryResponse) -> list[Notice]:
    notices = []
    coverage = _coverage_notice(response)
    if coverage is not None:
        notices.append(coverage)
    if response.suppressed:
        by_reason: Counter[str] = Counter()
        for s in response.suppressed:
            by_reason[str(s.reason)] += s.count
        detail = ", ".join(f"{reason} {count}" for reason, count in by_reason.items())
        notices.append(Notice("info", f"{by_reason.total()} records suppressed ({detail})"))
    if response.dropped_results:
        notices.append(
            Notice("info", f"{response.dropped_results} results dropped by the response budget")
        )
    if response.omitted:
        omitted = ", ".join(str(part) for part in response.omitted)
        notices.append(Notice("info", f"omitted for the response budget: {omitted}"))
    return [Notice(n.tone, bounded(n.text, NOTICE_CHARS)) for n in notices[:MAX_NOTICES]]


def row_status(result: Result) -> RowStatus | None:
    """The one pill a result row carries: stale first, then exact, then corroboration."""
    if result.verdict is not None and result.verdict != Verdict.current:
        return RowStatus(f"stale {result.verdict}", "warning")
    if result.explanation.exact_promoted:
        return RowStatus("exact", "success")
    units = result.explanation.corroboration.independent_units
    if units > 1:
        return RowStatus(f"corroborated {units}", "info")
    return None

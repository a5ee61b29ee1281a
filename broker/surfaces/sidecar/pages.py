"""Sidecar's pages from recall's answers: results onto rows, sources onto documents.

Projects recall's vocabulary onto Sidecar's (outcome and coverage onto a page,
withheld counts onto notices) and decides nothing about retrieval.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from broker.config import Config
from broker.contracts import (
    QueryResponse,
    Result,
    SearchOutcome,
    SourceRow,
    SourcesResponse,
    SourceState,
)
from broker.severity import Severity, severity
from broker.surfaces.sidecar.protocol import (
    ANY,
    MAX_CHOICE_ID,
    MAX_CHOICES,
    MAX_COVERAGE_ROWS,
    MAX_NOTICES,
    line,
)

COVERAGE_STATE = {
    SearchOutcome.success: "answered",
    SearchOutcome.partial: "unhealthy",
    SearchOutcome.timeout: "timeout",
    SearchOutcome.skipped: "skipped",
    SearchOutcome.failed: "failed",
    SearchOutcome.unavailable: "unhealthy",
    SearchOutcome.denied: "unhealthy",
}
PARTIAL_REASON = "partial: the source searched only part of its boundary"


def choices(names: list[str], *, lead_with_any: bool = True) -> tuple[list[dict[str, str]], int]:
    out = [{"id": ANY, "title": "Any"}] if lead_with_any else []
    lost = 0
    for name in names:
        if len(name) > MAX_CHOICE_ID or len(out) >= MAX_CHOICES:
            lost += 1
        else:
            out.append({"id": name, "title": name})
    return out, lost


def label(name: str, configured: int, lost: int) -> str:
    return f"{name} ({configured - lost} of {configured})" if lost else name


def record_types(config: Config) -> list[str]:
    return sorted({t for s in config.sources for t in (s.record_types or ()) if t})


def page_outcome(response: QueryResponse) -> str:
    """A page's outcome is the answer's rung on the ladder: answered, abstained, degraded or failed."""
    return severity(response.outcome, response.coverage).name


def result_page(response: QueryResponse, sort: Any) -> dict[str, Any]:
    rows = sorted_rows(list(enumerate(response.results, 1)), sort if isinstance(sort, dict) else {})
    page: dict[str, Any] = {
        "outcome": page_outcome(response),
        "items": [result_item(rank, result) for rank, result in rows],
        "total": len(rows) + response.dropped_results,
    }
    notices = result_notices(response)
    if notices:
        page["notices"] = notices
    withheld = sum(s.count for s in response.suppressed)
    if withheld or response.dropped_results:
        page["omitted"] = {"suppressed": withheld, "dropped": response.dropped_results}
    coverage = coverage_rows(response)
    if coverage:
        page["coverage"] = coverage
    return page


def updated(result: Result) -> datetime | None:
    primary = result.primary
    return primary.event_time or primary.confirmed_at or primary.observed_at or primary.valid_from


def sorted_rows(rows: list[tuple[int, Result]], sort: dict[str, Any]) -> list[tuple[int, Result]]:
    key = sort.get("key") or "rank"
    descending = sort.get("dir") == "desc" or (not sort.get("dir") and key == "updated")
    by_rank = sorted(rows, key=lambda r: r[0])
    if key == "source":  # sorting is stable, so relevance breaks every tie
        return sorted(by_rank, key=lambda r: r[1].primary.source_id, reverse=descending)
    if key == "updated":  # an unknown time is not an old one: last either way
        known = [(r, t) for r in by_rank if (t := updated(r[1])) is not None]
        unknown = [r for r in by_rank if updated(r[1]) is None]
        return [r for r, _ in sorted(known, key=lambda pair: pair[1], reverse=descending)] + unknown
    return sorted(rows, key=lambda r: r[0], reverse=descending)


def result_item(rank: int, result: Result) -> dict[str, Any]:
    primary = result.primary
    item: dict[str, Any] = {
        "id": primary.locator,
        "cells": {
            "rank": str(rank),
            "title": line(primary.title.strip() or primary.local_part, 512),
            "source": line(primary.source_id, 512),
            "excerpt": line(primary.excerpt, 512),
        },
    }
    units = result.explanation.corroboration.independent_units
    if result.explanation.exact_promoted:
        item["status"] = {"label": "exact", "tone": "success"}
    elif units > 1:
        item["status"] = {"label": f"corroborated {units}", "tone": "info"}
    return item


def result_notices(response: QueryResponse) -> list[dict[str, str]]:
    from broker.render.ledger import degraded_entries

    notices: list[dict[str, str]] = []
    degraded = degraded_entries(response)
    if severity(response.outcome) is Severity.failed:
        notices.append({"tone": "danger", "text": "every source recall asked failed: " + ", ".join(degraded)
                        if degraded else "every source recall asked failed, so an empty list would claim nothing"})
    elif degraded:
        asked = len(response.source_outcomes or []) or (
            response.source_summary.sources if response.source_summary else len(degraded))
        notices.append({"tone": "warning",
                        "text": f"{len(degraded)} of {asked} sources did not answer ({', '.join(degraded)})"})
    if response.suppressed:
        counts: dict[str, int] = {}
        for s in response.suppressed:
            counts[str(s.reason)] = counts.get(str(s.reason), 0) + s.count
        detail = ", ".join(f"{reason} {count}" for reason, count in counts.items())
        notices.append({"tone": "info", "text": f"{sum(counts.values())} records suppressed ({detail})"})
    if response.dropped_results:
        notices.append({"tone": "info", "text": f"{response.dropped_results} results dropped by the response budget"})
    notices += [{"tone": "info", "text": f"omitted for the response budget: {part}"} for part in response.omitted]
    return [{"tone": n["tone"], "text": line(n["text"], 200)} for n in notices[:MAX_NOTICES]]


def coverage_rows(response: QueryResponse) -> list[dict[str, Any]]:
    rows = []
    for report in response.source_outcomes or ():
        state = COVERAGE_STATE.get(report.outcome, "unhealthy")
        reason = report.reason or ""
        if report.outcome == SearchOutcome.partial and not reason:
            reason = PARTIAL_REASON
        elif state == "unhealthy" and not reason:
            reason = str(report.outcome)
        row: dict[str, Any] = {"source": line(report.source_id, 512), "state": state}
        if reason:
            row["reason"] = line(reason, 200)
        if report.elapsed_ns >= 1_000_000:
            row["elapsedMs"] = report.elapsed_ns // 1_000_000
        rows.append(row)
    if len(rows) <= MAX_COVERAGE_ROWS:
        return rows
    first = [r for r in rows if r["state"] != "answered"] + [r for r in rows if r["state"] == "answered"]
    return first[:MAX_COVERAGE_ROWS]


def shortfall_text(listing: SourcesResponse, total: int) -> str:
    """Which sources keep the listing from ``ok``: those that cannot answer, then those
    that answer from less than they hold."""
    parts = []
    unusable = [row.source_id for row in listing.unusable]
    if unusable:
        parts.append(f"{len(unusable)} of {total} sources cannot answer ({', '.join(unusable)})")
    short = [row.source_id for row in listing.sources if row.status == SourceState.degraded]
    if short:
        parts.append(f"{len(short)} of {total} answer from less than they hold ({', '.join(short)})")
    return "; ".join(parts)


def health_label(row: SourceRow) -> str:
    """The row's state as the core decided it, spelled for people."""
    return str(row.status).replace("_", " ")


def health_tone(row: SourceRow) -> str:
    if row.status in (SourceState.disabled, SourceState.not_probed):
        return "neutral"
    return {SourceState.healthy: "success", SourceState.degraded: "warning"}.get(row.status, "danger")


def stamp(value: datetime | None) -> str:
    """An instant as RFC 3339 in UTC to the second; a time without a zone is UTC."""
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def freshness(row: SourceRow) -> str:
    if row.health is None:
        return ""
    return stamp(row.health.last_success_at) or stamp(row.health.checked_at)


def source_document(profile: str, row: SourceRow) -> dict[str, Any]:
    def fields(pairs: list[tuple[str, Any]]) -> list[dict[str, str]]:
        return [{"label": k, "value": line(str(v), 512)} for k, v in pairs if v not in (None, "", [], 0)]

    health = row.health
    health_pairs: list[tuple[str, Any]] = [("Status", health_label(row)), ("Error", row.error)]
    if not row.probed:
        health_pairs.append(("Probed", "no; the configuration says not to contact it"))
    elif health is not None:
        health_pairs += [
            ("Coverage", health.coverage),
            ("Checked", stamp(health.checked_at)),
            ("Last success", stamp(health.last_success_at)),
            ("Source watermark", health.source_watermark),
            ("Index watermark", health.index_watermark),
            ("Generation", health.index_generation),
            ("Records", health.record_count),
            ("Indexed", health.indexed_count),
            ("Failed", health.failed_count),
        ]
    capability_pairs: list[tuple[str, Any]] = [
        ("Adapter id", row.adapter_id),
        ("Name", row.display_name),
        ("Capabilities", ", ".join(row.capabilities or [])),
        ("Query modes", ", ".join(row.query_modes or [])),
        ("as_of", row.as_of_support),
        ("Record types", ", ".join(row.record_types or [])),
        ("Freshness policy", row.freshness_policy),
    ]
    document: dict[str, Any] = {
        "identity": row.source_id,
        "title": line(row.source_id, 300),
        "subtitle": line(" · ".join(p for p in (row.adapter, row.freshness_mode) if p), 120),
        "status": {"label": health_label(row), "tone": health_tone(row)},
        "fields": fields([
            ("Adapter", row.adapter),
            ("Profile", profile),
            ("Enabled", "yes" if row.enabled else "no"),
            ("In profile", "yes" if row.in_profile else "no"),
            ("Sensitivity", row.sensitivity),
            ("Location", row.location),
        ]),
    }
    sections = [
        {"title": title, "fields": body}
        for title, body in (("Health", fields(health_pairs)), ("Capabilities", fields(capability_pairs)))
        if body
    ]
    if sections:
        document["sections"] = sections
    return document

"""The pointer tier as JSON: what ``recall query --json`` prints and MCP carries as structured content.

It keeps what a caller needs to choose a locator to expand, plus every fact the
response claims (outcome, coverage, the source summary naming degraded sources,
suppressions, budget omissions). Scores, explanations, members, the ledger and
the plan are the diagnostic tier and are left out; ``--json --explain`` has them.
"""

from __future__ import annotations

from typing import Any

from broker.contracts import QueryResponse, Result, SourceSummary, Verdict
from broker.render.encode import json_document
from broker.render.ledger import response_summary

POINTER_TIER = "pointer"


def project_result(rank: int, result: Result) -> dict[str, Any]:
    primary = result.primary
    projected: dict[str, Any] = {
        "rank": rank,
        "locator": primary.locator,
        "source_id": primary.source_id,
        "record_type": primary.record_type,
    }
    if primary.title:
        projected["title"] = primary.title
    if primary.excerpt:
        projected["excerpt"] = primary.excerpt
        if primary.excerpt_kind is not None:
            projected["excerpt_kind"] = str(primary.excerpt_kind)
    if result.explanation.exact_promoted:
        projected["exact"] = True
    units = result.explanation.corroboration.independent_units
    if units > 1:
        projected["corroboration"] = units
    if result.verdict is not None:
        projected["verdict"] = str(result.verdict)
        successor = superseded_by(result)
        if successor:
            projected["superseded_by"] = successor
        if claimants(result):
            projected["claimed_by"] = claimants(result)
    return projected


def superseded_by(result: Result) -> str | None:
    """The successor's locator of a result shown (``include_stale``) although superseded."""
    temporal = result.explanation.temporal
    if result.verdict != Verdict.superseded or temporal is None:
        return None
    return temporal.superseded_by


def claimants(result: Result) -> list[str]:
    """The successors that each claim a result marked ``ambiguous_supersession``."""
    temporal = result.explanation.temporal
    if result.verdict != Verdict.ambiguous_supersession or temporal is None:
        return []
    return list(temporal.claimed_by or ())


def summary_json(summary: SourceSummary) -> dict[str, Any]:
    data: dict[str, Any] = {"sources": summary.sources, "outcomes": dict(summary.outcomes)}
    if summary.degraded:
        data["degraded"] = list(summary.degraded)
    return data


def pointer_projection(response: QueryResponse) -> dict[str, Any]:
    """The ``--json`` pointer tier of ``response``, ``"tier": "pointer"``."""
    projected: dict[str, Any] = {
        "tier": POINTER_TIER,
        "results": [project_result(rank, r) for rank, r in enumerate(response.results, 1)],
    }
    summary = response_summary(response)
    if summary is not None:
        projected["source_summary"] = summary_json(summary)
    if response.suppressed:
        projected["suppressed"] = [s.to_json() for s in response.suppressed]
    if response.omitted:
        projected["omitted"] = [str(part) for part in response.omitted]
    projected["outcome"] = str(response.outcome)
    projected["coverage"] = str(response.coverage)
    projected["truncated"] = response.truncated
    if response.dropped_results:
        projected["dropped_results"] = response.dropped_results
    projected["elapsed_ns"] = response.elapsed_ns
    return projected


def pointer_document(response: QueryResponse) -> str:
    """The pointer tier as ``recall query --json`` prints it."""
    return json_document(pointer_projection(response))

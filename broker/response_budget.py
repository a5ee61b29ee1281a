"""Fit a query response to its response-token budget (anchor §4.3).

Order: charge the frame; if the frame, or the frame plus the cheapest first
result, does not fit, summarize the per-source ledger and drop the plan's source
list (named in ``omitted``), kept only if cheaper; keep whole results from the
top while they fit; from the first that does not, compress (no excerpt, no
members) while they fit; drop the rest and report it; finally forget
``duplicate_view`` suppressions whose shown result was dropped.

What is never traded is the floor: outcome, coverage, the degraded sources by
name, every suppression, and the summary standing in for the ledger. Above the
floor the rendered response never exceeds the budget. Truncation never changes
outcome or coverage.
"""

from __future__ import annotations

from broker.contracts import (
    OmittedPart,
    QueryResponse,
    Result,
    SourceReport,
    SourceSummary,
    Suppression,
    SuppressionReason,
    Surface,
)
from broker.render import ledger
from broker.render.cost import Cost, cost_for


def summarize_sources(reports: list[SourceReport]) -> SourceSummary:
    """The ledger reduced to counts by outcome and the degraded sources by name."""
    return ledger.summarize_sources(reports)


def compress(result: Result) -> Result:
    """A result reduced to what a caller needs to ask for more: a label and a locator.

    The excerpt kind goes with the excerpt; keeping it would claim a match the
    caller was never shown.
    """
    primary = result.primary.model_copy(update={"excerpt": None, "excerpt_kind": None})
    return result.model_copy(update={"primary": primary, "members": []})


def _summarized(response: QueryResponse) -> QueryResponse | None:
    """The frame with the parts that grow with the profile summarized, or None if none exist."""
    reports = response.source_outcomes
    if not reports and not response.plan.sources:
        return None
    update: dict[str, object] = {}
    omitted = list(response.omitted)
    if reports:
        update["source_summary"] = response.source_summary or summarize_sources(reports)
        update["source_outcomes"] = None
        if OmittedPart.source_outcomes not in omitted:
            omitted.append(OmittedPart.source_outcomes)
    else:
        update["source_summary"] = None
    if response.plan.sources:
        update["plan"] = response.plan.model_copy(update={"sources": []})
        if OmittedPart.plan_sources not in omitted:
            omitted.append(OmittedPart.plan_sources)
    update["omitted"] = omitted
    return response.model_copy(update=update)


def _starved(frame_tokens: int, budget: int, results: list[Result], cost: Cost) -> bool:
    """The frame does not fit, or keeping it whole leaves no room for even one result."""
    if frame_tokens > budget:
        return True
    return bool(results) and frame_tokens + cost.result(1, compress(results[0])) > budget


def _carried(
    suppressed: list[Suppression], before: list[Result], kept: list[Result]
) -> list[Suppression]:
    """Suppressions minus the duplicate views of results this shaping dropped."""
    shown = {r.explanation.lineage_root for r in kept}
    dropped = {r.explanation.lineage_root for r in before} - shown
    return [
        s
        for s in suppressed
        if not (s.reason == SuppressionReason.duplicate_view and s.fused_into in dropped)
    ]


def shape(response: QueryResponse, budget_tokens: int, surface: Surface) -> QueryResponse:
    """``response`` fitted to ``budget_tokens`` as priced on ``surface``.

    A budget of zero or less is unbounded: the ledger is kept and the summary
    removed. The input is never mutated; unchanged parts are shared with it.
    """
    full = response.model_copy(update={"source_summary": None})
    if budget_tokens <= 0:
        return full

    cost = cost_for(surface)
    results = response.results
    shaped, tokens = full, cost.frame(full)
    if _starved(tokens, budget_tokens, results, cost):
        summarized = _summarized(response)
        if summarized is not None:
            summarized_tokens = cost.frame(summarized)
            if summarized_tokens < tokens:
                shaped, tokens = summarized, summarized_tokens

    kept: list[Result] = []
    dropped = 0
    whole = True
    for index, result in enumerate(results):
        rank = len(kept) + 1
        if whole:
            price = cost.result(rank, result)
            if tokens + price <= budget_tokens:
                tokens += price
                kept.append(result)
                continue
            whole = False
        compressed = compress(result)
        price = cost.result(rank, compressed)
        if tokens + price <= budget_tokens:
            tokens += price
            kept.append(compressed)
            continue
        dropped = len(results) - index
        break

    update: dict[str, object] = {
        "results": kept,
        "suppressed": _carried(shaped.suppressed, results, kept),
    }
    if dropped:
        update["truncated"] = True
        update["dropped_results"] = shaped.dropped_results + dropped
    return shaped.model_copy(update=update)

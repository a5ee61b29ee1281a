"""Hypothesis strategies for query responses of any shape the broker can produce.

Strategies are built once at import: building them inside a draw costs more
than the test they feed.
"""

from __future__ import annotations

from hypothesis import strategies as st

from broker.contracts import (
    Coverage,
    ExcerptKind,
    Outcome,
    QueryResponse,
    Result,
    SearchOutcome,
    SkipReason,
    SourceReport,
    Suppression,
    SuppressionReason,
    TimeoutBudget,
    TimeoutDetail,
    Verdict,
)

from . import fixtures

SOURCE_IDS = sorted(fixtures.SOURCE_UIDS)

_text_chars = st.characters(codec="utf-8")
prose = st.text(_text_chars, max_size=240)
short = st.text(_text_chars, max_size=60)
source_ids = st.sampled_from(SOURCE_IDS)
maybe_prose = st.none() | prose
excerpt_kinds = st.none() | st.sampled_from(ExcerptKind)
small_maps = st.none() | st.dictionaries(st.sampled_from("abc"), short, max_size=2)
relevances = st.none() | st.floats(0.0, 1.0)
stale_verdicts = st.none() | st.sampled_from([Verdict.superseded, Verdict.expired])
timeouts = st.none() | st.builds(
    TimeoutDetail,
    budget=st.sampled_from(TimeoutBudget),
    limit_ns=st.none() | st.integers(1, 10**10),
)
report_reasons = st.none() | st.sampled_from([str(r) for r in SkipReason])
document_numbers = st.integers(0, 10**6)
local_ranks = st.integers(1, 120)
extra_members = st.lists(st.tuples(source_ids, short), max_size=2)


@st.composite
def _results(draw: st.DrawFn) -> Result:
    source_id = draw(source_ids)
    number = draw(document_numbers)
    excerpt = draw(maybe_prose)
    primary = fixtures.candidate(
        f"{source_id}:doc-{number}.md#L1-L{draw(local_ranks)}",
        title=draw(short),
        excerpt=excerpt,
        kind=draw(excerpt_kinds) if excerpt else None,
        local_rank=draw(local_ranks),
        metadata=draw(small_maps),
    )
    also = tuple(
        fixtures.candidate(f"{sid}:also-{number}-{n}.md", title=title)
        for n, (sid, title) in enumerate(draw(extra_members))
    )
    return fixtures.result(
        primary,
        also=also,
        exact=draw(st.booleans()),
        relevance=draw(relevances),
        verdict=draw(stale_verdicts),
    )


@st.composite
def _reports(draw: st.DrawFn) -> SourceReport:
    outcome = draw(st.sampled_from(SearchOutcome))
    return fixtures.report(
        draw(source_ids),
        outcome,
        reason=draw(report_reasons),
        candidates=draw(st.integers(0, 40)),
        elapsed_ms=draw(st.integers(0, 5000)),
        timeout=draw(timeouts) if outcome == SearchOutcome.timeout else None,
        diagnostics=draw(small_maps),
    )


result_lists = st.lists(_results(), max_size=10, unique_by=lambda r: r.explanation.lineage_root)
report_lists = st.lists(_reports(), max_size=6)
plan_source_lists = st.lists(source_ids, max_size=6)
limit_drops = st.just(0) | st.integers(1, 30)
temporal_problem_lists = st.none() | st.lists(short, max_size=2)
suppression_reasons = st.lists(
    st.tuples(st.sampled_from(SuppressionReason), st.integers(1, 12), short), max_size=5
)


def _suppression(reason: SuppressionReason, count: int, text: str, roots: list[str]) -> Suppression:
    fused_into = None
    if reason == SuppressionReason.duplicate_view:
        # Alternate between a shown result and one no result has.
        fused_into = roots[count % len(roots)] if roots else "01UIDNOTES:elsewhere.md"
    return Suppression(
        reason=reason,
        count=count,
        lineage_root=None if reason == SuppressionReason.sensitivity else text or "root",
        fused_into=fused_into,
        successor=text if reason == SuppressionReason.superseded else None,
    )


@st.composite
def responses(draw: st.DrawFn) -> QueryResponse:
    shown = draw(result_lists)
    roots = [r.explanation.lineage_root for r in shown]
    dropped = draw(limit_drops)
    return QueryResponse(
        results=shown,
        source_outcomes=draw(report_lists),
        plan=fixtures.plan(*draw(plan_source_lists)),
        suppressed=[_suppression(*entry, roots) for entry in draw(suppression_reasons)],
        outcome=Outcome.answered if shown else draw(st.sampled_from(Outcome)),
        coverage=draw(st.sampled_from(Coverage)),
        truncated=dropped > 0,
        dropped_results=dropped,
        elapsed_ns=draw(st.integers(0, 10**10)),
        temporal_problems=draw(temporal_problem_lists),
    )

"""Properties of outcome and coverage: a failing source is never reported as success."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from broker.candidate_admission import failure_report
from broker.contracts import (
    NON_DEGRADING_REASONS,
    Coverage,
    Outcome,
    SearchOutcome,
    SkipReason,
    SourceReport,
    TimeoutBudget,
)
from broker.severity import decide_coverage, decide_outcome, severity
from broker.supervise import AdapterFailure

reports = st.lists(
    st.builds(
        SourceReport,
        source_uid=st.sampled_from(["A", "B", "C"]),
        source_id=st.sampled_from(["a", "b", "c"]),
        outcome=st.sampled_from(list(SearchOutcome)),
        reason=st.one_of(st.none(), st.sampled_from([str(r) for r in SkipReason])),
    ),
    max_size=6,
)


@given(reports, st.booleans())
def test_coverage_is_complete_only_when_every_asked_source_succeeded(rows, has_results):
    coverage = decide_coverage(rows)
    asked = [r for r in rows if r.outcome != SearchOutcome.skipped]
    if any(r.outcome != SearchOutcome.success for r in asked):
        assert coverage == Coverage.degraded
    if any(r.outcome == SearchOutcome.skipped and r.reason not in NON_DEGRADING_REASONS for r in rows):
        assert coverage == Coverage.degraded


@given(reports)
def test_without_results_every_asked_source_failing_is_failed_never_abstained(rows):
    outcome = decide_outcome(False, rows)
    asked = [r for r in rows if r.outcome != SearchOutcome.skipped]
    answered = [r for r in asked if r.outcome in (SearchOutcome.success, SearchOutcome.partial)]
    if asked and not answered:
        assert outcome == Outcome.failed
    else:
        assert outcome == Outcome.abstained


@given(reports, st.booleans())
def test_exit_code_puts_failed_over_degraded_over_abstained(rows, has_results):
    from broker.contracts import Plan, QueryResponse

    response = QueryResponse(
        source_outcomes=rows,
        plan=Plan(profile="p", deadline=datetime.now(UTC), fusion_reserve_ns=0, limit=20,
                  relevance_floor=0.1),
        outcome=decide_outcome(has_results, rows),
        coverage=decide_coverage(rows),
    )
    code = severity(response.outcome, response.coverage).exit_code
    if response.outcome == Outcome.failed:
        assert code == 4
    elif response.coverage == Coverage.degraded:
        assert code == 3
    else:
        assert code == (0 if has_results else 2)


@given(
    st.sampled_from(list(SearchOutcome)),
    st.sampled_from(
        ["deadline_exceeded", "deadline_exceeded_unresponsive", "cancelled", "unreachable",
         "denied", "as_of_unsupported", "budget_exceeded", "spawn_failed", "adapter_error",
         "protocol_violation", "handshake_timeout"]
    ),
)
def test_a_failed_search_is_never_reported_as_success(outcome, reason):
    report = failure_report(
        AdapterFailure(outcome, reason, "it broke"),
        source_uid="A",
        source_id="a",
        elapsed_ns=1,
        timeout_budget=TimeoutBudget.source_timeout,
        timeout_limit_ns=1,
        deadline=datetime.now(UTC),
    )
    assert report.outcome not in (SearchOutcome.success, SearchOutcome.partial, SearchOutcome.skipped)
    assert decide_coverage([report]) == Coverage.degraded
    assert decide_outcome(False, [report]) == Outcome.failed

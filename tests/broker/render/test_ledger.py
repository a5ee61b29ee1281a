from __future__ import annotations

from broker.render.human import degraded_entries
from broker.response_budget import summarize_sources

from . import fixtures


def test_degraded_entries_attribute_each_timeout_to_the_budget_that_ended_it() -> None:
    assert degraded_entries(fixtures.degraded()) == [
        "slow (timeout: source timeout 1.5s)",
        "tracker (timeout: request latency budget 5s)",
        "remote (timeout: caller deadline)",
        "archive (timeout: adapter-internal deadline)",
        "tasks (unreachable)",
        "flaky (partial)",
        "events (as_of_unsupported)",
    ]


def test_a_source_skipped_for_a_non_degrading_reason_is_not_named() -> None:
    assert not any(entry.startswith("mail ") for entry in degraded_entries(fixtures.degraded()))


def test_degraded_entries_come_from_the_summary_when_the_ledger_was_omitted() -> None:
    assert degraded_entries(fixtures.summarized()) == [
        "slow (timeout: source timeout 1.5s)",
        "tasks (unreachable)",
    ]


def test_summary_counts_sources_by_outcome_in_outcome_order() -> None:
    summary = summarize_sources(fixtures.degraded().source_outcomes or [])
    assert (summary.sources, list(summary.outcomes.items())) == (
        9,
        [("partial", 1), ("skipped", 2), ("success", 1), ("timeout", 4), ("unavailable", 1)],
    )


def test_summary_names_the_same_degraded_sources_as_the_ledger() -> None:
    response = fixtures.degraded()
    summary = summarize_sources(response.source_outcomes or [])
    assert summary.degraded == degraded_entries(response)

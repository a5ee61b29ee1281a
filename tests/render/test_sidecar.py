from __future__ import annotations

from broker.render.sidecar import Notice, RowStatus, bounded, query_notices, row_status

from . import fixtures


def test_bounded_text_is_one_line_and_cut_with_an_ellipsis() -> None:
    assert bounded("  line one\nline\ttwo  ", 12) == "line one li…"


def test_bounded_text_that_fits_is_unchanged() -> None:
    assert bounded("fits", 4) == "fits"


def test_a_failed_query_names_every_source_it_asked() -> None:
    assert query_notices(fixtures.failed()) == [
        Notice("danger", "every source recall asked failed: notes, tasks")
    ]


def test_a_degraded_query_counts_the_sources_that_did_not_answer() -> None:
    assert query_notices(fixtures.degraded())[0] == Notice(
        "warning",
        "7 of 9 sources did not answer (slow, tracker, remote, archive, tasks, flaky, events)",
    )


def test_a_summarized_ledger_still_yields_the_coverage_notice() -> None:
    assert query_notices(fixtures.summarized())[0] == Notice(
        "warning", "2 of 4 sources did not answer (slow, tasks)"
    )


def test_suppressions_are_totalled_by_reason() -> None:
    assert query_notices(fixtures.withheld()) == [
        Notice(
            "info",
            "7 records suppressed (sensitivity 2, duplicate_view 1, expired 1,"
            " not_yet_valid 1, superseded 2)",
        )
    ]


def test_budget_drops_and_omissions_are_noticed() -> None:
    assert query_notices(fixtures.summarized())[1:] == [
        Notice("info", "3 results dropped by the response budget"),
        Notice("info", "omitted for the response budget: source_outcomes, plan_sources"),
    ]


def test_row_status_prefers_a_stale_verdict_then_exact_then_corroboration() -> None:
    stale, answered = fixtures.stale_shown(), fixtures.answered()
    assert [row_status(r) for r in (stale.results[1], *answered.results)] == [
        RowStatus("stale superseded", "warning"),
        RowStatus("corroborated 2", "info"),
        RowStatus("exact", "success"),
        None,
    ]

"""The human layout, stated literally: two-space fields, three-character excerpt gutter."""

from __future__ import annotations

from broker.render.human import render_expand, render_query

from . import fixtures


def test_pointer_tier_prints_outcome_pointers_markers_and_suppressions() -> None:
    assert render_query(fixtures.answered(), explain=False) == (
        "outcome answered  coverage complete  results 3  elapsed 14ms\n"
        "\n"
        "1. notes:runbooks/restore.md#L3-L9  corroborated 2\n"
        "   Restore Runbook > Quarterly Drill\n"
        " > Each quarter the newest snapshot is restored to a scratch volume and checksums"
        " compared.\n"
        "2. notes:spec.md#L1-L12  exact\n"
        "   Specification\n"
        " ~ Opening paragraph of the document, shown because no text matched.\n"
        "3. mail:thread-17f3\n"
        "   Re: Backup retention\n"
        "   Snapshots are kept for ninety days;\n"
        "   the drill task rotates owners.\n"
        "\n"
        "suppressed\n"
        "  below_relevance_floor  count 1  lineage notes:misc/glossary.md#L1-L4\n"
    )


def test_abstention_says_results_none_without_a_results_count() -> None:
    assert render_query(fixtures.abstained(), explain=False) == (
        "outcome abstained  coverage complete  elapsed 2ms\n\nresults: none\n"
    )


def test_an_empty_list_emptied_by_drops_says_how_many_were_dropped() -> None:
    text = render_query(fixtures.truncated_to_nothing(), explain=False)
    assert text.endswith("truncated  dropped 4\n\nresults: none shown, 4 dropped\n")


def test_degraded_line_follows_the_outcome_line() -> None:
    lines = render_query(fixtures.failed(), explain=False).splitlines()
    assert lines[:2] == [
        "outcome failed  coverage degraded  elapsed 5ms",
        "degraded coverage: notes (failed), tasks (unreachable)",
    ]


def test_a_stale_result_is_marked_with_its_verdict_and_successor_on_the_pointer_line() -> None:
    text = render_query(fixtures.stale_shown(), explain=False)
    assert (
        "2. notes:decisions/backups.md#L12-L20  stale superseded by "
        "notes:decisions/backups-2026.md#L1-L8\n"
    ) in text
    assert "3. events:belief/backup.retention#ev-9  stale expired\n" in text


def test_a_superseded_suppression_names_its_successor() -> None:
    text = render_query(fixtures.withheld(), explain=False)
    assert (
        "  superseded  count 2  lineage notes:decisions/backups.md#L12-L20"
        "  successor notes:decisions/backups-2026.md#L1-L8\n"
    ) in text


def test_explain_tier_prints_the_verdict_with_its_clock_and_inputs() -> None:
    text = render_query(fixtures.stale_shown(), explain=True)
    assert (
        "   verdict:       expired by valid time (valid time 2026-03-04T05:06:07Z; "
        "valid to 2025-12-31T00:00:00Z)\n"
    ) in text


def test_explain_tier_labels_align_in_a_fourteen_character_column() -> None:
    text = render_query(fixtures.answered(), explain=True)
    assert "   corroboration: 2 independent units from notes, tasks (cap 2)\n" in text
    assert "   local rank:    1 of 7\n" in text


def test_summarized_ledger_and_plan_say_they_were_omitted_for_the_budget() -> None:
    text = render_query(fixtures.summarized(), explain=True)
    assert (
        "sources\n"
        "  sources 4  success 2  timeout 1  unavailable 1"
        "  (per-source ledger omitted for the response budget)\n"
    ) in text
    assert text.endswith("\n  per-source plan omitted for the response budget\n")


def test_expansion_prints_provenance_then_a_blank_line_then_content() -> None:
    assert render_expand(fixtures.expansion(truncated=True)) == (
        "provenance notes:runbooks/restore.md  revision git:abc123  truncated"
        "  boundary recall_sanitize_limit\n"
        "\n"
        "# Quarterly Drill\n\nEach quarter the newest snapshot is restored.\n"
    )


def test_explain_tier_lists_temporal_problems_the_verdicts_could_not_use() -> None:
    text = render_query(fixtures.stale_shown(), explain=True)
    assert (
        "\ntemporal problems\n"
        "  supersession cycle between notes:a.md#L1-L3, notes:b.md#L1-L3: all left current\n"
    ) in text

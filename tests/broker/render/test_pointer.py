from __future__ import annotations

from broker.render.pointer import pointer_projection

from . import fixtures


def test_pointer_projection_names_its_tier() -> None:
    assert pointer_projection(fixtures.answered())["tier"] == "pointer"


def test_pointer_results_carry_no_score_explanation_or_members() -> None:
    projected = pointer_projection(fixtures.answered())["results"][0]
    assert not {"score", "explanation", "members", "primary"} & projected.keys()


def test_corroboration_is_stated_only_above_one_independent_unit() -> None:
    results = pointer_projection(fixtures.answered())["results"]
    assert [r.get("corroboration") for r in results] == [2, None, None]


def test_exact_is_stated_only_for_exact_promoted_results() -> None:
    results = pointer_projection(fixtures.answered())["results"]
    assert [r.get("exact") for r in results] == [None, True, None]


def test_an_excerpt_without_a_claim_has_no_excerpt_kind() -> None:
    unclaimed = pointer_projection(fixtures.answered())["results"][2]
    assert "excerpt" in unclaimed and "excerpt_kind" not in unclaimed


def test_stale_results_carry_their_verdict() -> None:
    results = pointer_projection(fixtures.stale_shown())["results"]
    assert [r.get("verdict") for r in results] == [None, "superseded", "expired"]


def test_source_summary_is_built_from_the_ledger_when_shaping_left_none() -> None:
    summary = pointer_projection(fixtures.degraded())["source_summary"]
    assert summary["sources"] == 9 and "slow (timeout: source timeout 1.5s)" in summary["degraded"]


def test_an_empty_degraded_list_is_left_out_of_the_summary() -> None:
    assert "degraded" not in pointer_projection(fixtures.answered())["source_summary"]


def test_superseded_suppression_carries_its_successor() -> None:
    suppressed = pointer_projection(fixtures.withheld())["suppressed"]
    assert {
        "reason": "superseded",
        "count": 2,
        "lineage_root": "01UIDNOTES:decisions/backups.md#L12-L20",
        "successor": "notes:decisions/backups-2026.md#L1-L8",
    } in suppressed


def test_budget_omissions_and_drops_are_reported() -> None:
    projected = pointer_projection(fixtures.summarized())
    assert (projected["omitted"], projected["truncated"], projected["dropped_results"]) == (
        ["source_outcomes", "plan_sources"],
        True,
        3,
    )

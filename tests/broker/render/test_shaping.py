from __future__ import annotations

from broker.contracts import OmittedPart, Outcome, SuppressionReason, Surface
from broker.render.cost import StructuredCost, cost_for
from broker.render.human import degraded_entries, render_query
from broker.render.tokens import estimate_tokens
from broker.response_budget import compress, shape

from . import fixtures


def _whole_then_compressed_budget() -> int:
    """Exactly enough on the pointer surface for result 1 whole and result 2 compressed."""
    response = fixtures.answered()
    cost = cost_for(Surface.pointer)
    first, second = response.results[:2]
    return cost.frame(response) + cost.result(1, first) + cost.result(2, compress(second))


def test_an_unbounded_budget_keeps_the_ledger_and_removes_the_summary() -> None:
    response = fixtures.summarized().model_copy(
        update={"source_outcomes": fixtures.degraded().source_outcomes}
    )
    shaped = shape(response, 0, Surface.pointer)
    assert shaped.source_summary is None and shaped.source_outcomes == response.source_outcomes


def test_an_unbounded_budget_keeps_every_result() -> None:
    assert shape(fixtures.answered(), -1, Surface.pointer).results == fixtures.answered().results


def test_results_that_fit_whole_keep_their_excerpts() -> None:
    shaped = shape(fixtures.answered(), _whole_then_compressed_budget(), Surface.pointer)
    assert shaped.results[0] == fixtures.answered().results[0]


def test_the_first_result_that_does_not_fit_whole_is_compressed() -> None:
    shaped = shape(fixtures.answered(), _whole_then_compressed_budget(), Surface.pointer)
    second = shaped.results[1]
    assert (second.primary.excerpt, second.primary.excerpt_kind, second.members) == (None, None, [])


def test_the_first_compressed_result_that_does_not_fit_ends_the_list_and_is_counted() -> None:
    shaped = shape(fixtures.answered(), _whole_then_compressed_budget(), Surface.pointer)
    assert (len(shaped.results), shaped.truncated, shaped.dropped_results) == (2, True, 1)


def test_budget_drops_add_to_drops_already_made_by_the_limit() -> None:
    response = fixtures.truncated()
    shaped = shape(response, 1, Surface.pointer)
    assert shaped.dropped_results == 5 + len(response.results)


def test_a_starved_frame_summarizes_the_ledger_and_names_what_it_omitted() -> None:
    shaped = shape(fixtures.degraded(), 1, Surface.explained)
    assert shaped.source_outcomes is None
    assert shaped.plan.sources == []
    assert shaped.omitted == [OmittedPart.source_outcomes, OmittedPart.plan_sources]


def test_a_summarized_frame_still_names_every_degraded_source() -> None:
    shaped = shape(fixtures.degraded(), 1, Surface.explained)
    assert degraded_entries(shaped) == degraded_entries(fixtures.degraded())
    assert "degraded coverage: slow (timeout: source timeout 1.5s)" in render_query(
        shaped, explain=True
    )


def test_a_frame_that_fits_with_a_result_keeps_the_whole_ledger() -> None:
    shaped = shape(fixtures.degraded(), 100_000, Surface.explained)
    assert shaped.source_outcomes == fixtures.degraded().source_outcomes and not shaped.omitted


def test_a_budget_that_drops_every_result_leaves_an_answer_answered() -> None:
    shaped = shape(fixtures.answered(), 1, Surface.pointer)
    assert (shaped.results, shaped.outcome, shaped.truncated) == ([], Outcome.answered, True)


def test_a_duplicate_view_of_a_dropped_result_is_no_longer_reported() -> None:
    shaped = shape(fixtures.withheld(), 1, Surface.pointer)
    assert SuppressionReason.duplicate_view not in {s.reason for s in shaped.suppressed}


def test_a_duplicate_view_of_a_shown_result_is_still_reported() -> None:
    shaped = shape(fixtures.withheld(), 100_000, Surface.pointer)
    assert shaped.suppressed == fixtures.withheld().suppressed


def test_every_other_suppression_survives_any_budget() -> None:
    shaped = shape(fixtures.withheld(), 1, Surface.pointer)
    kept = [
        s for s in fixtures.withheld().suppressed if s.reason != SuppressionReason.duplicate_view
    ]
    assert shaped.suppressed == kept


def test_shaping_leaves_its_input_unchanged() -> None:
    response = fixtures.degraded()
    before = response.to_json()
    shape(response, 1, Surface.explained)
    shape(response, _whole_then_compressed_budget(), Surface.pointer)
    assert response.to_json() == before


def test_the_human_pointer_tier_fits_the_budget_it_was_shaped_for() -> None:
    budget = _whole_then_compressed_budget()
    shaped = shape(fixtures.answered(), budget, Surface.pointer)
    assert estimate_tokens(render_query(shaped, explain=False)) <= budget


def test_a_tool_result_budget_is_charged_for_its_envelope() -> None:
    response = fixtures.answered().model_copy(
        update={"source_outcomes": [], "plan": fixtures.plan()}
    )
    cost = cost_for(Surface.tool)
    frame_without_envelope = cost.frame(response) - 96
    shaped = shape(
        response, frame_without_envelope + cost.result(1, response.results[0]), Surface.tool
    )
    assert shaped.results == []


def test_the_explained_tool_surface_costs_more_than_the_pointer_tool_surface() -> None:
    result = fixtures.answered().results[0]
    assert cost_for(Surface.tool_explained).result(1, result) > cost_for(Surface.tool).result(
        1, result
    )


def test_an_unknown_surface_is_priced_as_structured() -> None:
    assert isinstance(cost_for("hologram"), StructuredCost)

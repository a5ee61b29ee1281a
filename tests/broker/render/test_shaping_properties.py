"""Properties of shaping over generated responses, measured on the rendered output."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.contracts import QueryResponse, SuppressionReason, Surface
from broker.render.cost import cost_for
from broker.render.encode import structured_document
from broker.render.human import degraded_entries, render_query
from broker.render.pointer import pointer_document
from broker.render.tokens import estimate_tokens
from broker.response_budget import compress, shape

from .strategies import responses

RENDERERS: dict[Surface, Callable[[QueryResponse], str]] = {
    Surface.pointer: lambda r: render_query(r, explain=False),
    Surface.explained: lambda r: render_query(r, explain=True),
    Surface.structured: structured_document,
    Surface.structured_pointer: pointer_document,
}
surfaces = st.sampled_from(list(RENDERERS))


@st.composite
def cases(draw: st.DrawFn) -> tuple[QueryResponse, int, Surface]:
    """A response, a budget and a surface; half the budgets land within a few tokens of
    what the frame and some leading results cost, where an underpriced piece shows."""
    response = draw(responses())
    surface = draw(surfaces)
    if draw(st.booleans()):
        return response, draw(st.integers(1, 4000)), surface
    cost = cost_for(surface)
    leading = response.results[: draw(st.integers(0, len(response.results)))]
    squeeze = compress if draw(st.booleans()) else (lambda r: r)
    budget = cost.frame(response) + sum(
        cost.result(rank, squeeze(r)) for rank, r in enumerate(leading, 1)
    )
    return response, max(1, budget + draw(st.integers(-3, 6))), surface


PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BUDGET_PROPERTY = settings(PROPERTY, max_examples=300)


def _tokens(response: QueryResponse, surface: Surface) -> int:
    return estimate_tokens(RENDERERS[surface](response))


def _limited_to_three(response: QueryResponse) -> QueryResponse:
    cut = len(response.results) - 3
    if cut <= 0:
        return response
    return response.model_copy(
        update={
            "results": response.results[:3],
            "truncated": True,
            "dropped_results": response.dropped_results + cut,
        }
    )


@BUDGET_PROPERTY
@given(cases())
def test_rendered_tokens_stay_within_the_budget_or_what_three_results_cost(
    case: tuple[QueryResponse, int, Surface],
) -> None:
    response, budget, surface = case
    shaped = shape(response, budget, surface)
    three = shape(_limited_to_three(response), budget, surface)
    assert _tokens(shaped, surface) <= max(budget, _tokens(three, surface))


@BUDGET_PROPERTY
@given(cases())
def test_a_response_that_kept_any_result_is_within_its_budget(
    case: tuple[QueryResponse, int, Surface],
) -> None:
    response, budget, surface = case
    shaped = shape(response, budget, surface)
    if shaped.results:
        assert _tokens(shaped, surface) <= budget


@PROPERTY
@given(cases())
def test_shaping_never_changes_outcome_coverage_or_the_degraded_sources(
    case: tuple[QueryResponse, int, Surface],
) -> None:
    response, budget, surface = case
    shaped = shape(response, budget, surface)
    assert (shaped.outcome, shaped.coverage, degraded_entries(shaped)) == (
        response.outcome,
        response.coverage,
        degraded_entries(response),
    )


@PROPERTY
@given(cases())
def test_only_duplicate_views_of_dropped_results_leave_the_suppressions(
    case: tuple[QueryResponse, int, Surface],
) -> None:
    response, budget, surface = case
    shaped = shape(response, budget, surface)
    shown = {r.explanation.lineage_root for r in shaped.results}
    dropped = {r.explanation.lineage_root for r in response.results} - shown
    expected = [
        s
        for s in response.suppressed
        if not (s.reason == SuppressionReason.duplicate_view and s.fused_into in dropped)
    ]
    assert shaped.suppressed == expected


@PROPERTY
@given(cases())
def test_kept_results_are_the_leading_ones_and_every_other_one_is_counted(
    case: tuple[QueryResponse, int, Surface],
) -> None:
    response, budget, surface = case
    shaped = shape(response, budget, surface)
    kept = [r.primary.locator for r in shaped.results]
    assert kept == [r.primary.locator for r in response.results[: len(kept)]]
    assert shaped.dropped_results == response.dropped_results + len(response.results) - len(kept)


@PROPERTY
@given(cases())
def test_shaping_never_mutates_its_input(case: tuple[QueryResponse, int, Surface]) -> None:
    response, budget, surface = case
    before = response.to_json()
    shape(response, budget, surface)
    assert response.to_json() == before

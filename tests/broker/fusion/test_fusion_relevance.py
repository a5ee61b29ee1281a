from __future__ import annotations

import math

import pytest
from fusion_builders import cand, facts, run


def test_relevance_scales_the_prior() -> None:
    out = run([cand("notes:a.md", 1, relevance=0.5)], sources=[facts("notes", 1.2)])
    assert out.results[0].score == pytest.approx(1.2 * 0.5 / 61)


def test_missing_relevance_is_fused_as_one() -> None:
    out = run([cand("notes:a.md", 1)])
    assert out.results[0].score == pytest.approx(1 / 61)
    assert out.results[0].explanation.relevance is None


@pytest.mark.parametrize("value", [-0.5, math.nan])
def test_negative_or_nan_relevance_is_fused_as_zero(value: float) -> None:
    # the wire refuses a negative relevance: only a record built past it carries one
    out = run([cand("notes:a.md", 1).model_copy(update={"relevance": value})], relevance_floor=0.0)
    assert out.results[0].score == 0


def test_relevance_above_one_is_fused_as_one() -> None:
    out = run([cand("notes:a.md", 1).model_copy(update={"relevance": 3.0})])
    assert out.results[0].score == pytest.approx(1 / 61)


def test_group_uses_the_relevance_of_its_best_ranked_candidate() -> None:
    pool = [
        cand("notes:a.md", 1, relevance=0.2, derived_from=["mail:thread-1"]),
        cand("notes:b.md", 2, relevance=1.0, derived_from=["mail:thread-1"]),
    ]
    out = run(pool)
    assert len(out.results) == 1
    assert out.results[0].score == pytest.approx(0.2 / 61)


def test_lineage_score_is_the_max_over_sources_not_the_sum() -> None:
    pool = [
        cand("notes:a.md", 3),
        cand("mail:m1", 1, derived_from=["notes:a.md"]),
    ]
    out = run(pool, sources=[facts("notes", 1.0), facts("mail", 1.0)])
    assert len(out.results) == 1
    assert out.results[0].score == pytest.approx(1 / 61)

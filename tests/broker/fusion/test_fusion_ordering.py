from __future__ import annotations

from fusion_builders import cand, facts, locators, run


def test_equal_scores_break_ties_by_score_basis_locator() -> None:
    pool = [cand("notes:b.md", 1), cand("mail:z", 1), cand("tasks:a", 1)]
    assert locators(run(pool)) == ["mail:z", "notes:b.md", "tasks:a"]


def test_zero_scores_are_ordered_by_local_rank_before_locator() -> None:
    pool = [cand("notes:a.md", 2, relevance=0.0), cand("mail:z", 1, relevance=0.0)]
    assert locators(run(pool, relevance_floor=0.0)) == ["mail:z", "notes:a.md"]


def test_nonzero_equal_scores_ignore_local_rank() -> None:
    pool = [cand("notes:b.md", 1), cand("mail:a", 3)]
    out = run(pool, sources=[facts("notes", 1.0), facts("mail", 2.0)], rank_constant=1)
    assert [r.score for r in out.results] == [0.5, 0.5]
    assert locators(out) == ["mail:a", "notes:b.md"]


def test_higher_score_comes_first() -> None:
    pool = [cand("notes:a.md", 3), cand("notes:b.md", 1)]
    assert locators(run(pool)) == ["notes:b.md", "notes:a.md"]

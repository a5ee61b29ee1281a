from __future__ import annotations

from fusion_builders import EXACT, cand, facts, run


def _pool(task_signals=None):
    return [
        cand("notes:runbooks/restore.md#L3-L9", 1, source_record_id="runbooks/restore.md"),
        cand("notes:decisions/backups.md#L12-L20", 2, source_record_id="decisions/backups.md"),
        cand("tasks:aaaa0001", 1, record_type="task", title="Rotate drill owner",
             match_signals=task_signals),
    ]


SOURCES = [facts("notes", 1.2), facts("tasks", 1.0)]


def test_worked_example_scores_and_order() -> None:
    out = run(_pool(), sources=SOURCES)
    assert [(r.primary.locator, round(r.score, 7)) for r in out.results] == [
        ("notes:runbooks/restore.md#L3-L9", 0.0196721),
        ("notes:decisions/backups.md#L12-L20", 0.0193548),
        ("tasks:aaaa0001", 0.0163934),
    ]
    assert [r.explanation.rank_constant for r in out.results] == [60, 60, 60]


def test_worked_example_exact_task_is_promoted_for_an_identifier_query() -> None:
    out = run(_pool(EXACT), query="aaaa0001", sources=SOURCES)
    assert out.results[0].primary.locator == "tasks:aaaa0001"
    assert out.results[0].explanation.exact_promoted
    assert round(out.results[0].score, 7) == 0.0163934

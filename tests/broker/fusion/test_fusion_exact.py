from __future__ import annotations

from fusion_builders import EXACT, cand, facts, run

from broker.contracts import MatchSignal


def _pool(**exact_fields):
    fields = {"record_type": "task", "match_signals": EXACT, **exact_fields}
    return [cand("notes:a.md", 1), cand("tasks:braid", 9, **fields)]


def test_exact_match_partitions_above_a_higher_score_for_a_one_word_query() -> None:
    out = run(_pool(), query="braid")
    assert out.results[0].primary.locator == "tasks:braid"
    assert [r.explanation.exact_promoted for r in out.results] == [True, False]


def test_exact_match_is_not_promoted_in_a_natural_language_question() -> None:
    out = run(_pool(), query="summarize the braid pipeline")
    assert out.results[0].primary.locator == "notes:a.md"


def test_exact_alias_match_is_promoted_even_in_a_question() -> None:
    pool = _pool(match_signals=[MatchSignal.exact_identifier, MatchSignal.alias])
    out = run(pool, query="summarize the braid pipeline")
    assert out.results[0].primary.locator == "tasks:braid"


def test_stable_identifier_query_promotes_only_the_record_it_names() -> None:
    pool = [
        cand("notes:a.md", 1),
        cand("tasks:braid", 5, record_type="task", match_signals=EXACT),
        cand("tasks:td-6c98c1", 9, record_type="task", match_signals=EXACT),
    ]
    out = run(pool, query="is braid blocked by td-6c98c1")
    assert [r.primary.locator for r in out.results] == [
        "tasks:td-6c98c1", "notes:a.md", "tasks:braid"]


def test_identity_names_the_identifier_by_its_basename() -> None:
    pool = [cand("notes:a.md", 1),
            cand("notes:runbooks/spec.md#L1-L4", 9, match_signals=EXACT)]
    out = run(pool, query="open spec.md please")
    assert out.results[0].primary.locator == "notes:runbooks/spec.md#L1-L4"


def test_exact_signal_of_another_candidate_does_not_lend_identity() -> None:
    pool = [cand("notes:a.md", 1),
            cand("tasks:x1", 50, record_type="task", match_signals=EXACT,
                 metadata={"entity_id": "E"}),
            cand("mail:td-6c98c1", 50, metadata={"entity_id": "E"}, record_type="task")]
    out = run(pool, query="status of td-6c98c1", sources=[facts("mail", 0.5)])
    assert out.results[0].primary.locator == "notes:a.md"


def test_query_without_class_promotes_exact_matches() -> None:
    out = run(_pool(), query="?")
    assert out.query_class is None
    assert out.results[0].primary.locator == "tasks:braid"


def test_exact_cluster_is_exempt_from_the_relevance_floor() -> None:
    pool = [cand("notes:a.md", 1, relevance=0.5),
            cand("tasks:braid", 2, record_type="task", match_signals=EXACT, relevance=0.0)]
    out = run(pool, query="braid", relevance_floor=0.3)
    assert [r.primary.locator for r in out.results] == ["tasks:braid", "notes:a.md"]

from __future__ import annotations

import math

from fusion_builders import cand, locators, reasons, run

from broker.contracts import Mode


def test_floor_withholds_a_cluster_nothing_in_which_reaches_it() -> None:
    pool = [cand("notes:a.md", 1, relevance=0.5), cand("notes:b.md#L1-L2", 2, relevance=0.05),
            cand("notes:b.md#L5-L6", 3, relevance=0.02)]
    out = run(pool, relevance_floor=0.1)
    assert locators(out) == ["notes:a.md"]
    assert reasons(out) == [("below_relevance_floor", "01NOTES:b.md#L1-L2", 2)]


def test_one_candidate_above_the_floor_keeps_its_cluster() -> None:
    pool = [cand("notes:b.md#L1-L2", 1, relevance=0.05), cand("notes:b.md#L5-L6", 2, relevance=0.5)]
    assert len(run(pool, relevance_floor=0.1).results) == 1


def test_missing_or_non_finite_relevance_is_never_below_the_floor() -> None:
    pool = [cand("notes:a.md", 1, relevance=0.5), cand("notes:b.md", 2),
            cand("notes:c.md", 3).model_copy(update={"relevance": math.inf})]  # past the wire's bound
    out = run(pool, relevance_floor=0.9)
    assert locators(out) == ["notes:b.md", "notes:c.md"]
    assert reasons(out) == [("below_relevance_floor", "01NOTES:a.md", 1)]


def test_floor_stands_down_rather_than_abstain() -> None:
    pool = [cand("notes:a.md", 1, relevance=0.05), cand("notes:b.md", 2, relevance=0.01)]
    out = run(pool, relevance_floor=0.1)
    assert locators(out) == ["notes:a.md", "notes:b.md"]
    assert out.suppressed == []


def test_zero_floor_withholds_nothing() -> None:
    pool = [cand("notes:a.md", 1, relevance=0.5), cand("notes:b.md", 2, relevance=0.0)]
    assert len(run(pool, relevance_floor=0.0).results) == 2


def test_pre_reply_withholds_lineages_the_host_already_showed() -> None:
    pool = [cand("notes:a.md", 1), cand("notes:b.md", 2)]
    out = run(pool, mode=Mode.pre_reply, suppress_lineages=frozenset({"01NOTES:a.md"}))
    assert locators(out) == ["notes:b.md"]
    assert reasons(out) == [("lineage_suppressed", "01NOTES:a.md", 1)]


def test_explicit_request_ignores_lineage_suppression() -> None:
    pool = [cand("notes:a.md", 1), cand("notes:b.md", 2)]
    out = run(pool, mode=Mode.explicit, suppress_lineages=frozenset({"01NOTES:a.md"}))
    assert locators(out) == ["notes:a.md", "notes:b.md"]


def test_pre_reply_keeps_a_cluster_holding_a_record_not_yet_shown() -> None:
    pool = [cand("notes:a.md", 1, metadata={"entity_id": "E"}),
            cand("mail:m1", 2, metadata={"entity_id": "E"})]
    out = run(pool, mode=Mode.pre_reply, suppress_lineages=frozenset({"01NOTES:a.md"}))
    assert len(out.results) == 1


def test_pre_reply_suppressing_either_view_of_a_record_suppresses_it() -> None:
    same = {"content_fingerprint": "fp", "source_revision": "r", "source_record_id": "x"}
    pool = [cand("notes:x", 1, **same), cand("mirror:x", 2, **same)]
    out = run(pool, mode=Mode.pre_reply, suppress_lineages=frozenset({"01MIRROR:x"}))
    assert out.results == []
    assert reasons(out) == [("lineage_suppressed", "01NOTES:x", 2)]


def test_near_duplicate_within_one_source_is_withheld() -> None:
    pool = [cand("notes:a.md", 1, content_fingerprint="fp"),
            cand("notes:b.md", 2, content_fingerprint="fp", record_type="note")]
    out = run(pool)
    assert locators(out) == ["notes:a.md"]
    assert reasons(out) == [("near_duplicate", "01NOTES:b.md", 1)]


def test_near_duplicate_never_hides_another_sources_evidence() -> None:
    pool = [cand("notes:a.md", 1, content_fingerprint="fp"),
            cand("mail:m1", 2, content_fingerprint="fp", record_type="note")]
    assert len(run(pool).results) == 2


def test_limit_drops_the_tail_and_marks_truncation() -> None:
    pool = [cand(f"notes:n{i}.md", i) for i in range(1, 6)]
    out = run(pool, limit=2)
    assert (locators(out), out.dropped_results, out.truncated) == (
        ["notes:n1.md", "notes:n2.md"], 3, True)


def test_zero_limit_is_unbounded() -> None:
    pool = [cand(f"notes:n{i}.md", i) for i in range(1, 31)]
    out = run(pool, limit=0)
    assert (len(out.results), out.dropped_results, out.truncated) == (30, 0, False)


def test_suppressions_are_sorted_by_reason_then_root() -> None:
    pool = [cand("notes:a.md", 1, content_fingerprint="fp"),
            cand("notes:z.md", 2, content_fingerprint="fp", record_type="note"),
            cand("notes:c.md", 3, relevance=0.01), cand("notes:b.md", 4, relevance=0.01)]
    out = run(pool, relevance_floor=0.1)
    assert [(r, root) for r, root, _ in reasons(out)] == [
        ("below_relevance_floor", "01NOTES:b.md"),
        ("below_relevance_floor", "01NOTES:c.md"),
        ("near_duplicate", "01NOTES:z.md"),
    ]

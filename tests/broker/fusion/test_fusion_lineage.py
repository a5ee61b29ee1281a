from __future__ import annotations

import pytest
from fusion_builders import UIDS, cand, facts, run

from broker.fusion.lineage import Lineage, LineageGraph, independent_count


def _graph(pool, derivations=None):
    return LineageGraph(pool, UIDS, derivations or {})


def test_single_parent_edge_gives_the_parents_root() -> None:
    child = cand("mail:m1", derived_from=["notes:a.md"])
    assert _graph([child]).of(child).root == "01NOTES:a.md"


def test_edges_are_followed_through_retrieved_parents() -> None:
    pool = [cand("mail:m1", derived_from=["notes:a.md"]),
            cand("notes:a.md", derived_from=["tasks:t1"])]
    lineage = _graph(pool).of(pool[0])
    assert (lineage.root, lineage.depth) == ("01TASKS:t1", 2)


def test_following_stops_at_depth_four() -> None:
    chain = [cand(f"notes:c{i}.md", derived_from=[f"notes:c{i + 1}.md"]) for i in range(6)]
    lineage = _graph(chain).of(chain[0])
    assert (lineage.root, lineage.depth, lineage.truncated) == ("01NOTES:c4.md", 4, "max_depth")


def test_cycle_members_agree_on_the_smallest_root() -> None:
    pool = [cand("notes:b.md", derived_from=["notes:a.md"]),
            cand("notes:a.md", derived_from=["notes:b.md"])]
    graph = _graph(pool)
    assert {graph.of(c).root for c in pool} == {"01NOTES:a.md"}
    assert graph.of(pool[0]).truncated == "cycle"


def test_cycle_members_are_one_result() -> None:
    pool = [cand("notes:b.md", 2, derived_from=["notes:a.md"]),
            cand("notes:a.md", 1, derived_from=["notes:b.md"])]
    out = run(pool)
    assert len(out.results) == 1
    assert out.results[0].explanation.lineage_root == "01NOTES:a.md"


def test_composite_keeps_its_own_root_and_records_ancestors() -> None:
    summary = cand("notes:weekly.md", derived_from=["tasks:t1", "tasks:t2"])
    lineage = _graph([summary]).of(summary)
    assert lineage.root == "01NOTES:weekly.md"
    assert lineage.ancestors == ("01TASKS:t1", "01TASKS:t2")


def test_edge_naming_an_unconfigured_source_is_dropped() -> None:
    child = cand("mail:m1", derived_from=["elsewhere:x", "notes:a.md"])
    lineage = _graph([child]).of(child)
    assert lineage.root == "01NOTES:a.md"
    assert lineage.dropped == ("elsewhere:x",)


def test_source_level_derivation_applies_only_without_record_edges() -> None:
    plain = cand("mirror:a.md")
    linked = cand("mirror:b.md", derived_from=["notes:b.md"])
    graph = _graph([plain, linked], {"01MIRROR": "01NOTES"})
    assert graph.of(plain) == Lineage(root="01MIRROR:a.md", source_derives_from="01NOTES")
    assert graph.of(linked).source_derives_from is None


def test_composite_is_not_independent_of_counted_ancestors() -> None:
    parents = [Lineage("01TASKS:t1"), Lineage("01TASKS:t2")]
    composite = Lineage("01NOTES:w.md", ancestors=("01TASKS:t1", "01TASKS:t2"))
    assert independent_count([*parents, composite]) == 2


def test_derived_source_is_not_independent_of_its_upstream() -> None:
    assert independent_count(
        [Lineage("01NOTES:a.md"), Lineage("01MIRROR:a.md", source_derives_from="01NOTES")]
    ) == 1


def test_source_level_derivation_removes_corroboration_not_identity() -> None:
    pool = [cand("notes:a.md", 1, metadata={"entity_id": "E1"}),
            cand("mirror:x.md", 1, metadata={"entity_id": "E1"})]
    independent = run(pool, sources=[facts("notes"), facts("mirror")])
    derived = run(pool, sources=[facts("notes"), facts("mirror", derives_from="notes")])
    assert independent.results[0].explanation.corroboration.independent_units == 2
    assert independent.results[0].score == pytest.approx(2 / 61)
    assert derived.results[0].explanation.corroboration.independent_units == 1
    assert derived.results[0].score == pytest.approx(1 / 61)
    assert {m.lineage_root for m in derived.results[0].members} == {
        "01NOTES:a.md", "01MIRROR:x.md"}

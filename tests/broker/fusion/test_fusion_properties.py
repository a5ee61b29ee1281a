"""Fusion is a function of the pool, not of arrival order, and never reads local_score."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fusion_builders import NOW, UIDS, cand, default_sources, facts
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.contracts import MatchSignal, Mode
from broker.fusion import FusionOutput, FusionParams, fuse

DAY = timedelta(days=1)
LOCALS = ["a.md#L1-L2", "a.md#L5-L6", "b.md", "c", "td-6c98c1"]
SOURCES = list(UIDS)


def _ref() -> st.SearchStrategy[str]:
    return st.builds(lambda s, local: f"{s}:{local.split('#')[0]}",
                     st.sampled_from(SOURCES), st.sampled_from(LOCALS))


@st.composite
def candidates(draw: st.DrawFn) -> Any:
    source = draw(st.sampled_from(SOURCES))
    local = draw(st.sampled_from(LOCALS))
    metadata: dict[str, Any] = {}
    if draw(st.booleans()):
        metadata["entity_id"] = draw(st.sampled_from(["E1", "E2"]))
    if draw(st.integers(0, 4)) == 0:
        metadata["supersedes"] = [draw(_ref())]
    if draw(st.integers(0, 4)) == 0:
        metadata["superseded_by"] = draw(_ref())
    moments = st.sampled_from([None, NOW - 3 * DAY, NOW + 3 * DAY])
    return cand(
        f"{source}:{local}",
        draw(st.integers(1, 5)),
        record_type=draw(st.sampled_from(["document", "task"])),
        title=draw(st.sampled_from(["Backup Policy", "x", "Restore Drill", local])),
        relevance=draw(st.sampled_from([None, 0.0, 0.05, 0.3, 1.0])),
        content_fingerprint=draw(st.sampled_from([None, "fp1", "fp2"])),
        source_revision=draw(st.sampled_from([None, "r1"])),
        excerpt_kind=draw(st.sampled_from([None, "preview", "matched"])),
        match_signals=draw(st.sampled_from(
            [None, [MatchSignal.lexical], [MatchSignal.exact_identifier],
             [MatchSignal.exact_identifier, MatchSignal.alias]])),
        derived_from=draw(st.sampled_from([None, [], *[[f"{s}:b.md"] for s in SOURCES],
                                           ["notes:c", "mail:c"]])),
        valid_from=draw(moments),
        valid_to=draw(moments),
        event_time=draw(moments),
        local_score=draw(st.floats(-100, 100)),
        metadata=metadata or None,
    )


@st.composite
def scenarios(draw: st.DrawFn) -> Any:
    pool = draw(st.lists(candidates(), min_size=1, max_size=14))
    sources = {
        UIDS[s]: facts(
            s,
            draw(st.sampled_from([0.5, 1.0, 1.2, 2.0])),
            intent=draw(st.sampled_from([{}, {"identifier_query": 1.5}])),
            derives_from=draw(st.sampled_from([None, *(o for o in SOURCES if o != s)])),
            location=draw(st.sampled_from([None, "/data/shared"])),
        )
        for s in SOURCES
    }
    params = FusionParams(
        query=draw(st.sampled_from(["restore drill checksum", "td-6c98c1", "braid", "spec.md?"])),
        evaluated_at=NOW,
        relevance_floor=draw(st.sampled_from([0.0, 0.1, 0.5])),
        limit=draw(st.sampled_from([0, 2, 5])),
        mode=draw(st.sampled_from(list(Mode))),
        suppress_lineages=draw(st.sampled_from(
            [frozenset(), frozenset({"01NOTES:b.md", "01MAIL:c"})])),
        include_stale=draw(st.booleans()),
    )
    return pool, sources, params


def _fingerprint(out: FusionOutput) -> Any:
    return (
        [r.to_json() for r in out.results],
        [s.to_json() for s in out.suppressed],
        out.dropped_results, out.truncated, out.query_class,
        out.missing_successors, out.temporal_problems,
    )


def _order(out: FusionOutput) -> Any:
    return (
        [(r.explanation.lineage_root, r.primary.candidate_id, r.score) for r in out.results],
        [s.to_json() for s in out.suppressed],
    )


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_output_is_identical_under_any_order_of_candidates_and_sources(scenario, rnd) -> None:
    pool, sources, params = scenario
    shuffled_pool = list(pool)
    rnd.shuffle(shuffled_pool)
    source_items = list(sources.items())
    rnd.shuffle(source_items)
    id_items = list(UIDS.items())
    rnd.shuffle(id_items)
    first = fuse(pool, sources, dict(UIDS), params)
    second = fuse(shuffled_pool, dict(source_items), dict(id_items), params)
    assert _fingerprint(first) == _fingerprint(second)


@settings(max_examples=100, deadline=None)
@given(scenarios(), st.lists(st.floats(allow_nan=True), min_size=14, max_size=14))
def test_local_score_never_changes_the_order(scenario, scores) -> None:
    pool, sources, params = scenario
    rescored = [c.model_copy(update={"local_score": s}) for c, s in zip(pool, scores, strict=False)]
    assert _order(fuse(pool, sources, dict(UIDS), params)) == _order(
        fuse(rescored, sources, dict(UIDS), params))


def test_copies_of_one_candidate_differing_only_in_local_score_fuse_the_same_in_any_order() -> None:
    low = cand("tasks:a.md#L1-L2", 1, record_type="task", local_score=0.0)
    high = cand("tasks:a.md#L1-L2", 1, record_type="task", local_score=1.0)
    sources = default_sources()
    params = FusionParams(query="restore drill", evaluated_at=NOW, relevance_floor=0.0, limit=0)
    assert _fingerprint(fuse([low, high], sources, dict(UIDS), params)) == _fingerprint(
        fuse([high, low], sources, dict(UIDS), params)
    )

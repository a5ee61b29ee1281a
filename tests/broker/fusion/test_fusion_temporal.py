from __future__ import annotations

from datetime import timedelta

from fusion_builders import NOW, cand, locators, run

from broker.contracts import Clock, TemporalExplanation, Verdict
from broker.fusion import FusionOutput

DAY = timedelta(days=1)


def temporal_of(out: FusionOutput, index: int) -> TemporalExplanation:
    temporal = out.results[index].explanation.temporal
    assert temporal is not None
    return temporal


def _supersession(**new_fields):
    return [
        cand("notes:old.md#L1-L4", 1, source_record_id="old.md"),
        cand("notes:old.md#L8-L9", 2, source_record_id="old.md"),
        cand("notes:new.md#L1-L6", 3, source_record_id="new.md",
             metadata={"supersedes": ["notes:old.md"]}, **new_fields),
    ]


def test_expired_record_is_withheld_now_and_current_at_an_earlier_instant() -> None:
    pool = [cand("notes:a.md", 1, valid_to=NOW - DAY)]
    now = run(pool)
    then = run(pool, evaluated_at=NOW - 2 * DAY)
    assert (now.results, [(s.reason.value, s.count, s.lineage_root) for s in now.suppressed]) == (
        [], [("expired", 1, "01NOTES:a.md")])
    assert locators(then) == ["notes:a.md"]
    assert temporal_of(then, 0).verdict is Verdict.current


def test_not_yet_valid_record_is_withheld_until_it_takes_effect() -> None:
    pool = [cand("notes:a.md", 1, valid_from=NOW + DAY)]
    assert [s.reason.value for s in run(pool).suppressed] == ["not_yet_valid"]
    assert locators(run(pool, evaluated_at=NOW + 2 * DAY)) == ["notes:a.md"]


def test_superseded_note_is_withheld_whole_with_its_successor_named() -> None:
    out = run(_supersession(valid_from=NOW - 10 * DAY))
    assert locators(out) == ["notes:new.md#L1-L6"]
    [withheld] = out.suppressed
    assert (withheld.reason.value, withheld.count, withheld.lineage_root, withheld.successor) == (
        "superseded", 1, "01NOTES:old.md#L1-L4", "notes:new.md#L1-L6")  # one note, two chunks


def test_earlier_instant_shows_what_was_current_then() -> None:
    out = run(_supersession(valid_from=NOW - 10 * DAY), evaluated_at=NOW - 20 * DAY)
    assert locators(out) == ["notes:old.md#L1-L4"]
    assert [s.reason.value for s in out.suppressed] == ["not_yet_valid"]


def test_supersession_dated_by_event_time_after_the_instant_is_ignored() -> None:
    out = run(_supersession(event_time=NOW - 10 * DAY), evaluated_at=NOW - 20 * DAY)
    assert locators(out) == ["notes:old.md#L1-L4", "notes:new.md#L1-L6"]
    note = temporal_of(out, 0).note or ""
    assert "after the evaluation instant" in note


def test_supersession_across_sources_withholds_the_replaced_task() -> None:
    pool = [cand("tasks:t1", 1, record_type="task"),
            cand("notes:decision.md", 2, metadata={"supersedes": ["tasks:t1"]})]
    out = run(pool)
    assert locators(out) == ["notes:decision.md"]
    assert out.suppressed[0].successor == "notes:decision.md"


def test_supersession_cycle_is_reported_and_both_records_stay_current() -> None:
    pool = [cand("notes:a.md", 1, metadata={"supersedes": ["notes:b.md"]}),
            cand("notes:b.md", 2, metadata={"supersedes": ["notes:a.md"]})]
    out = run(pool)
    assert locators(out) == ["notes:a.md", "notes:b.md"]
    assert out.temporal_problems == [
        "supersession cycle between notes:a.md, notes:b.md: all left current"]


def test_ambiguous_successor_is_shown_marked_with_both_claimants() -> None:
    pool = [cand("notes:old.md", 1),
            cand("notes:a.md", 2, metadata={"supersedes": ["notes:old.md"]}),
            cand("notes:b.md", 3, metadata={"supersedes": ["notes:old.md"]})]
    out = run(pool)
    assert locators(out) == ["notes:old.md", "notes:a.md", "notes:b.md"]
    assert out.temporal_problems[0].startswith("ambiguous successor for notes:old.md")
    assert out.results[0].verdict is Verdict.ambiguous_supersession
    assert temporal_of(out, 0).claimed_by == ["notes:a.md", "notes:b.md"]
    assert [r.verdict for r in out.results[1:]] == [None, None]
    assert out.suppressed == []


def test_a_record_the_source_wrote_after_as_of_is_withheld_as_not_yet_known() -> None:
    pool = [cand("notes:a.md", 1, event_time=NOW - DAY), cand("notes:b.md", 2, event_time=NOW - 5 * DAY)]
    out = run(pool, evaluated_at=NOW, known_at=NOW - 2 * DAY)
    assert locators(out) == ["notes:b.md"]
    assert [(s.reason.value, s.lineage_root) for s in out.suppressed] == [("not_yet_known", "01NOTES:a.md")]
    assert locators(run(pool)) == ["notes:a.md", "notes:b.md"]


def test_explanation_names_the_clock_behind_each_verdict() -> None:
    pool = [cand("notes:a.md", 1, event_time=NOW - DAY),
            cand("notes:b.md", 2, valid_to=NOW - 3 * DAY, event_time=NOW - 5 * DAY)]
    out = run(pool, known_at=NOW - 2 * DAY, include_stale=True)
    by_locator = {r.primary.locator: r.explanation.temporal for r in out.results}
    unknown, expired = by_locator["notes:a.md"], by_locator["notes:b.md"]
    assert unknown is not None and expired is not None
    assert (unknown.verdict, unknown.clock, unknown.known_at, unknown.recorded_at) == (
        Verdict.not_yet_known, Clock.transaction_time, NOW - 2 * DAY, NOW - DAY)
    assert (expired.verdict, expired.clock) == (Verdict.expired, Clock.valid_time)


def test_include_stale_marks_stale_clusters_in_place() -> None:
    pool = [cand("notes:a.md", 1, valid_to=NOW - DAY), cand("notes:b.md", 2)]
    out = run(pool, include_stale=True)
    assert locators(out) == ["notes:a.md", "notes:b.md"]
    assert [r.verdict for r in out.results] == [Verdict.expired, None]
    assert temporal_of(out, 0).valid_to == NOW - DAY
    assert out.suppressed == []


def test_successor_ranked_below_takes_the_superseded_place() -> None:
    pool = [cand("notes:old.md", 1), cand("notes:f1.md", 2), cand("notes:f2.md", 3),
            cand("notes:new.md", 4, metadata={"supersedes": ["notes:old.md"]})]
    out = run(pool)
    assert locators(out) == ["notes:new.md", "notes:f1.md", "notes:f2.md"]
    assert "successor of superseded notes:old.md" in (temporal_of(out, 0).note or "")


def test_with_include_stale_the_superseded_cluster_follows_its_successor() -> None:
    pool = [cand("notes:old.md", 1), cand("notes:f1.md", 2),
            cand("notes:new.md", 3, metadata={"supersedes": ["notes:old.md"]})]
    out = run(pool, include_stale=True)
    assert locators(out) == ["notes:new.md", "notes:old.md", "notes:f1.md"]
    assert temporal_of(out, 1).superseded_by == "notes:new.md"


def test_successor_inherits_the_relevance_of_what_it_replaces() -> None:
    pool = [cand("notes:old.md", 1, relevance=0.9), cand("notes:f1.md", 2, relevance=0.5),
            cand("notes:new.md", 3, relevance=0.01, metadata={"supersedes": ["notes:old.md"]})]
    out = run(pool, relevance_floor=0.1)
    assert locators(out) == ["notes:new.md", "notes:f1.md"]


def test_fetched_successor_is_kept_regardless_of_the_floor() -> None:
    pool = [cand("notes:old.md", 1, relevance=0.05, metadata={"superseded_by": "notes:new.md"}),
            cand("notes:f1.md", 2, relevance=0.5),
            cand("notes:new.md", 1, relevance=0.0, metadata={"promoted_successor": True})]
    out = run(pool, relevance_floor=0.1)
    assert sorted(locators(out)) == ["notes:f1.md", "notes:new.md"]


def test_successor_not_in_the_pool_is_reported_missing() -> None:
    pool = [cand("notes:old.md", 1, metadata={"superseded_by": "notes:new.md"}), cand("notes:b.md", 2)]
    out = run(pool)
    assert out.missing_successors == ["notes:new.md"]
    assert [(s.reason.value, s.successor) for s in out.suppressed] == [
        ("superseded", "notes:new.md")]


def test_withheld_stale_clusters_do_not_occupy_limit_slots() -> None:
    pool = [cand("notes:x1.md", 1, valid_to=NOW - DAY), cand("notes:x2.md", 2, valid_to=NOW - DAY),
            *(cand(f"notes:c{i}.md", 2 + i) for i in range(1, 4))]
    out = run(pool, limit=3)
    assert (len(out.results), out.dropped_results, out.truncated) == (3, 0, False)


def test_predecessor_and_successor_with_one_title_never_merge() -> None:
    pool = [cand("notes:old.md", 1, title="Backup Policy"),
            cand("notes:new.md", 2, title="Backup Policy", metadata={"supersedes": ["notes:old.md"]})]
    out = run(pool)
    assert locators(out) == ["notes:new.md"]
    assert [s.reason.value for s in out.suppressed] == ["superseded"]


def test_temporal_explanation_appears_only_with_temporal_inputs() -> None:
    pool = [cand("notes:a.md", 1, valid_from=NOW - DAY), cand("notes:b.md", 2)]
    out = run(pool)
    temporal = temporal_of(out, 0)
    assert (temporal.verdict, temporal.valid_from, temporal.evaluated_at) == (
        Verdict.current, NOW - DAY, NOW)
    assert out.results[1].explanation.temporal is None

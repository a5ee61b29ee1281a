"""Each metric against hand-computed values, including where it is undefined."""

from __future__ import annotations

import math

import pytest

from broker.evaluation.metrics import (
    RATES,
    Grade,
    abstention_accuracy,
    abstention_precision,
    abstention_recall,
    aggregate,
    coverage_accuracy,
    degraded_handling,
    fold_duplicate_views,
    forbidden_at,
    fraction,
    mean,
    mrr_at,
    ndcg_at,
    percentile,
    recall_at,
    source_outcome_accuracy,
    success_at,
    success_at_1,
)

GRADES = {
    "s:a": Grade(3, required=True),
    "s:b": Grade(2, required=True),
    "s:c": Grade(1),
    "s:x": Grade(0, forbidden=True),
}


def test_ndcg_uses_linear_gain_over_the_ideal_order():
    # DCG = 1/log2(2) + 0 + 3/log2(4) = 1 + 1.5; ideal = 3 + 2/log2(3) + 1/log2(4)
    ranked = ["s:c", "s:x", "s:a"]
    expected = (1 + 1.5) / (3 + 2 / math.log2(3) + 0.5)
    assert ndcg_at(ranked, GRADES) == pytest.approx(expected)


def test_ndcg_is_one_for_the_ideal_ranking():
    assert ndcg_at(["s:a", "s:b", "s:c"], GRADES) == pytest.approx(1.0)


def test_ndcg_ignores_roots_below_rank_ten():
    ranked = [f"s:filler{i}" for i in range(10)] + ["s:a"]
    assert ndcg_at(ranked, GRADES) == 0.0


def test_ndcg_is_undefined_without_a_positive_grade():
    assert ndcg_at(["s:x"], {"s:x": Grade(0, forbidden=True)}) is None


def test_recall_counts_required_roots_in_the_top_k():
    ranked = ["s:c", "s:a", "s:z1", "s:z2", "s:z3", "s:b"]
    assert recall_at(ranked, GRADES, 5) == 0.5
    assert recall_at(ranked, GRADES, 20) == 1.0


def test_recall_is_undefined_when_nothing_is_required():
    assert recall_at(["s:c"], {"s:c": Grade(3)}, 5) is None


def test_mrr_is_the_reciprocal_rank_of_the_first_grade_three_root():
    assert mrr_at(["s:b", "s:c", "s:a"], GRADES) == pytest.approx(1 / 3)


def test_mrr_is_zero_when_the_grade_three_root_is_missing_from_the_top_ten():
    assert mrr_at(["s:b"] + [f"s:f{i}" for i in range(9)] + ["s:a"], GRADES) == 0.0


def test_mrr_is_undefined_without_a_grade_three_judgment():
    assert mrr_at(["s:b"], {"s:b": Grade(2)}) is None


def test_success_needs_a_useful_root_in_the_top_five():
    assert success_at(["s:c", "s:z", "s:z2", "s:z3", "s:b"], GRADES) == 1.0
    assert success_at(["s:c", "s:z", "s:z2", "s:z3", "s:z4", "s:a"], GRADES) == 0.0


def test_success_is_undefined_without_a_grade_two_judgment():
    assert success_at(["s:c"], {"s:c": Grade(1)}) is None


def test_forbidden_flags_a_forbidden_root_in_the_top_five():
    assert forbidden_at(["s:a", "s:x"], GRADES) == 1.0
    assert forbidden_at(["s:a", "s:b", "s:c", "s:d", "s:e", "s:x"], GRADES) == 0.0


def test_forbidden_is_undefined_without_a_forbidden_judgment():
    assert forbidden_at(["s:a"], {"s:a": Grade(3)}) is None


def test_abstention_precision_is_defined_only_where_the_run_abstained():
    assert abstention_precision("abstain", "abstain") == 1.0
    assert abstention_precision("abstain", "answer") == 0.0
    assert abstention_precision("answer", "abstain") is None


def test_abstention_recall_is_defined_only_where_abstaining_was_expected():
    assert abstention_recall("abstain", "abstain") == 1.0
    assert abstention_recall("answer", "abstain") == 0.0
    assert abstention_recall("abstain", "answer") is None


def test_abstention_accuracy_compares_behaviours():
    assert abstention_accuracy("fail", "fail") == 1.0
    assert abstention_accuracy("error", "abstain") == 0.0


def test_coverage_accuracy_is_undefined_unless_asserted():
    assert coverage_accuracy("degraded", None) is None
    assert coverage_accuracy("degraded", "complete") == 0.0


def test_source_outcome_accuracy_counts_an_unreported_source_as_wrong():
    reported = {"A": "success", "B": "timeout"}
    assert source_outcome_accuracy(reported, {"A": "success", "B": "unavailable", "C": "success"}) == pytest.approx(1 / 3)
    assert source_outcome_accuracy(reported, None) is None


def test_degraded_handling_applies_only_when_a_source_is_expected_to_fail():
    honest = dict(observed="answer", expected="answer", coverage="degraded", outcomes_right=1.0)
    assert degraded_handling(expected_coverage="degraded", **honest) == 1.0
    assert degraded_handling(expected_coverage="complete", **honest) is None
    assert degraded_handling(expected_coverage=None, **honest) is None


def test_degraded_handling_fails_a_quiet_answer_or_a_wrong_source_outcome():
    quiet = dict(observed="answer", expected="answer", coverage="complete", outcomes_right=None)
    assert degraded_handling(expected_coverage="degraded", **quiet) == 0.0
    wrong = dict(observed="answer", expected="answer", coverage="degraded", outcomes_right=0.5)
    assert degraded_handling(expected_coverage="degraded", **wrong) == 0.0


def test_degraded_handling_accepts_a_failed_query_that_was_expected_to_fail():
    assert degraded_handling(observed="fail", expected="fail", coverage="degraded",
                             expected_coverage=None, outcomes_right=None) == 1.0


def test_a_duplicate_view_counts_as_the_root_it_was_folded_into():
    ranked, grades = fold_duplicate_views(
        ["s:shown", "m:copy", "s:other"],
        {"m:copy": Grade(3, required=True), "s:shown": Grade(1)},
        {"m:copy": "s:shown"},
    )
    assert ranked == ["s:shown", "s:other"]
    assert grades == {"s:shown": Grade(3, required=True)}


def test_fraction_and_mean_are_undefined_on_nothing():
    assert fraction(0, 0) is None
    assert mean([None, None]) == {"value": None, "n": 0}
    assert mean([1.0, None, 0.0]) == {"value": 0.5, "n": 2}


def test_percentile_is_nearest_rank():
    samples = [50, 10, 40, 20, 30]
    assert percentile(samples, 50) == 30
    assert percentile(samples, 95) == 50
    assert percentile([], 95) is None


def _case(case_id: str, tags: list[str], families: list[str], ndcg: float | None) -> dict:
    metrics = dict.fromkeys(RATES)
    metrics["ndcg_at_10"] = ndcg
    return {"case_id": case_id, "tags": tags, "families": families, "metrics": metrics, "latency_ns": 1}


def test_groups_count_a_case_in_every_tag_and_the_macro_averages_group_means():
    cases = [_case("a", ["x", "y"], ["notes"], 1.0), _case("b", ["x"], ["tasks"], 0.0),
             _case("c", ["y"], ["notes"], None)]
    metrics = aggregate(cases)
    assert metrics["overall"]["ndcg_at_10"] == {"value": 0.5, "n": 2}
    tags = metrics["by_tag"]
    assert tags["groups"]["x"]["ndcg_at_10"] == {"value": 0.5, "n": 2}
    assert tags["groups"]["y"]["ndcg_at_10"] == {"value": 1.0, "n": 1}
    assert tags["macro"]["ndcg_at_10"] == {"value": 0.75, "n": 2}
    families = metrics["by_source_family"]
    assert families["groups"]["notes"]["cases"] == 2
    assert families["macro"]["ndcg_at_10"] == {"value": 0.5, "n": 2}
    assert families["macro"]["mrr_at_10"] == {"value": None, "n": 0}


def test_success_at_1_reads_only_the_first_root():
    grades = {"s:a": Grade(3), "s:b": Grade(2), "s:c": Grade(1)}
    assert success_at_1(["s:b", "s:a"], grades) == 1.0
    assert success_at_1(["s:c", "s:a"], grades) == 0.0
    assert success_at_1([], grades) == 0.0
    assert success_at_1(["s:c"], {"s:c": Grade(1)}) is None


def test_each_half_of_a_split_pack_is_its_own_group():
    cases = [_case("a", [], [], 1.0), _case("b", [], [], 0.0), _case("c", [], [], 0.5)]
    for case, split in zip(cases, ("tuning", "held-out", "held-out"), strict=True):
        case["splits"] = [split]
    halves = aggregate(cases)["by_split"]["groups"]
    assert halves["tuning"]["ndcg_at_10"] == {"value": 1.0, "n": 1}
    assert halves["held-out"]["ndcg_at_10"] == {"value": 0.25, "n": 2}

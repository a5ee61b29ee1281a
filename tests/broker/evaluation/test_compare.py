"""The compare rule: any rate that drops is a regression; latency never counts."""

from __future__ import annotations

import copy

import pytest

from broker.evaluation.compare import compare_runs
from broker.evaluation.metrics import RATES, aggregate


def _case(case_id: str, tags: list[str], families: list[str], latency: int = 1_000_000, **rates) -> dict:
    metrics = dict.fromkeys(RATES)
    metrics.update(rates)
    return {"case_id": case_id, "tags": tags, "families": families, "metrics": metrics, "latency_ns": latency}


def _run(cases: list[dict], run_id: str = "p-1", content_hash: str = "sha256:aa", status: str = "pass") -> dict:
    return {
        "run_id": run_id,
        "status": status,
        "pack": {"pack_id": "p", "version": "1", "content_hash": content_hash},
        "environment": {"os": "linux", "arch": "x86_64"},
        "metrics": aggregate(cases),
        "gates": [{"name": "coverage_honest", "status": "pass" if status == "pass" else "fail"}],
    }


BASE = [
    _case("a", ["exact"], ["notes"], ndcg_at_10=1.0, forbidden_at_5=0.0, abstention_accuracy=1.0),
    _case("b", ["paraphrase"], ["tasks"], ndcg_at_10=0.5, abstention_accuracy=1.0),
]


def test_identical_metrics_pass():
    result = compare_runs(_run(BASE), _run(copy.deepcopy(BASE), "p-2"))
    assert result.status == "pass"
    assert result.regressions == []


def test_a_drop_in_one_tag_group_is_a_regression():
    after = copy.deepcopy(BASE)
    after[1]["metrics"]["ndcg_at_10"] = 0.4
    result = compare_runs(_run(BASE), _run(after, "p-2"))
    keys = {(d["key"], d["metric"]) for d in result.regressions}
    assert ("tag:group:paraphrase", "ndcg_at_10") in keys
    assert ("overall", "ndcg_at_10") in keys
    assert ("source_family:group:tasks", "ndcg_at_10") in keys
    assert result.status == "regressed"


def test_forbidden_evidence_appearing_is_a_regression():
    after = copy.deepcopy(BASE)
    after[0]["metrics"]["forbidden_at_5"] = 1.0
    result = compare_runs(_run(BASE), _run(after, "p-2"))
    assert ("overall", "forbidden_at_5") in {(d["key"], d["metric"]) for d in result.regressions}


def test_an_improvement_is_not_a_regression():
    after = copy.deepcopy(BASE)
    after[1]["metrics"]["ndcg_at_10"] = 0.9
    result = compare_runs(_run(BASE), _run(after, "p-2"))
    assert result.status == "pass"
    assert any(d["change"] == pytest.approx(0.4) for d in result.deltas if d["key"] == "tag:group:paraphrase")


def test_a_rate_that_becomes_undefined_is_a_regression():
    after = copy.deepcopy(BASE)
    after[0]["metrics"]["forbidden_at_5"] = None
    result = compare_runs(_run(BASE), _run(after, "p-2"))
    assert ("overall", "forbidden_at_5") in {(d["key"], d["metric"]) for d in result.regressions}


def test_a_vanished_source_family_is_a_regression():
    after = copy.deepcopy(BASE)
    after[1]["families"] = []
    result = compare_runs(_run(BASE), _run(after, "p-2"))
    assert "source_family:group:tasks" in {d["key"] for d in result.regressions}


def test_latency_is_never_compared():
    slower = [dict(c, latency_ns=c["latency_ns"] * 100) for c in copy.deepcopy(BASE)]
    assert compare_runs(_run(BASE), _run(slower, "p-2")).status == "pass"


def test_runs_of_different_pack_content_are_not_comparable():
    result = compare_runs(_run(BASE), _run(BASE, "p-2", content_hash="sha256:bb"))
    assert result.status == "not_comparable"
    assert "re-record the baseline" in result.blockers[0]


def test_a_run_that_failed_its_gates_is_not_comparable():
    result = compare_runs(_run(BASE), _run(BASE, "p-2", status="fail"))
    assert result.status == "not_comparable"
    assert "coverage_honest" in result.blockers[0]


def test_case_changes_name_the_cases_that_got_worse():
    after = copy.deepcopy(BASE)
    after[1]["metrics"]["ndcg_at_10"] = 0.1
    result = compare_runs(_run(BASE), _run(after, "p-2"), BASE, after)
    assert [c["case_id"] for c in result.case_changes] == ["b"]

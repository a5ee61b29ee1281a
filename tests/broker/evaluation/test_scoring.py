"""Scoring one observation: ranked roots, assertion violations, leaks, families."""

from __future__ import annotations

from broker.evaluation.gates import excused
from broker.evaluation.pack import Case, Judgment
from broker.evaluation.scoring import ranked_roots, score

IDS = {"NOTES1": "notes", "TASKS1": "tasks"}


def _candidate(root: str, sensitivity: str = "internal") -> dict:
    uid, local = root.split(":", 1)
    return {"source_uid": uid, "source_id": IDS[uid], "locator": f"{IDS[uid]}:{local}",
            "lineage_root": root, "sensitivity": sensitivity}


def _result(root: str, *others: str, sensitivity: str = "internal") -> dict:
    members = [root, *others]
    return {"lineage_root": root, "locator": _candidate(root)["locator"], "excerpt": "Restore the snapshot",
            "exact_promoted": False, "corroborated_units": 1, "source_record_id": root,
            "content_fingerprint": None,
            "members": [{"lineage_root": m, "candidates": [_candidate(m, sensitivity)]} for m in members]}


def _observation(*results: dict, suppressed: list | None = None) -> dict:
    return {"case_id": "c", "behavior": "answer", "coverage": "complete", "exit_code": 0, "truncated": False,
            "results": list(results), "suppressed": suppressed or [], "source_outcomes": [],
            "expansions": [{"locator": r["locator"], "lineage_root": r["lineage_root"], "ok": True, "bytes": 10}
                           for r in results]}


def _case(**fields) -> Case:
    return Case.model_validate({"schema_version": 1, "case_id": "c", "query": "q",
                                "expected_behavior": "answer", **fields})


def test_ranked_roots_put_each_result_root_before_its_other_members():
    observation = _observation(_result("NOTES1:b", "NOTES1:a", "NOTES1:b"), _result("TASKS1:t", "NOTES1:a"))
    assert ranked_roots(observation) == ["NOTES1:b", "NOTES1:a", "TASKS1:t"]


def test_a_shown_root_asserted_withheld_is_a_violation():
    case = _case(assertions={"withheld_lineages": {"NOTES1:old": "superseded"}})
    scored = score(case, [], _observation(_result("NOTES1:old")), source_id_by_uid=IDS)
    assert scored["violations"] == [
        {"assertion": "withheld_lineages", "detail": "NOTES1:old is not withheld as superseded"}
    ]


def test_a_root_withheld_with_the_asserted_reason_passes():
    case = _case(assertions={"withheld_lineages": {"NOTES1:old": "superseded"}})
    suppressed = [{"reason": "superseded", "count": 1, "lineage_root": "NOTES1:old"}]
    scored = score(case, [], _observation(_result("NOTES1:new"), suppressed=suppressed), source_id_by_uid=IDS)
    assert scored["violations"] == []


def test_candidates_above_the_ceiling_are_counted_as_leaks():
    case = _case(assertions={"sensitivity_ceiling": "internal"})
    observation = _observation(_result("NOTES1:a", "NOTES1:b", sensitivity="confidential"))
    assert score(case, [], observation, source_id_by_uid=IDS)["sensitivity_leaks"] == 2


def test_source_families_come_from_positively_judged_roots():
    judgments = [
        Judgment(schema_version=1, case_id="c", lineage_root="TASKS1:t", relevance=2),
        Judgment(schema_version=1, case_id="c", lineage_root="NOTES1:x", relevance=0, forbidden=True),
    ]
    scored = score(_case(), judgments, _observation(_result("NOTES1:a")), source_id_by_uid=IDS)
    assert scored["families"] == ["tasks"]


def test_provenance_fails_when_a_locator_names_another_source():
    observation = _observation(_result("NOTES1:a"))
    observation["results"][0]["members"][0]["candidates"][0]["locator"] = "tasks:a"
    assert score(_case(), [], observation, source_id_by_uid=IDS)["metrics"]["provenance_accuracy"] == 0.0


def test_an_expected_failure_excuses_only_the_assertions_it_names():
    case = {"violations": [{"assertion": "expected_top_lineage", "detail": "top is x"},
                           {"assertion": "min_results", "detail": "0 results"}]}
    open_, hit = excused(case, {"expected_top_lineage"})
    assert [v["assertion"] for v in open_] == ["min_results"]
    assert [v["assertion"] for v in hit] == ["expected_top_lineage"]

"""Score one observed case: its ranked list, metrics and assertion violations. Pure.

An observation is the JSON-ready record the runner made of one query (see
:mod:`broker.evaluation.runner`); scoring adds ``ranked``, ``metrics``,
``violations``, ``sensitivity_leaks``, ``families``, ``tags`` and ``splits`` to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from broker.contracts import Sensitivity, SuppressionReason
from broker.evaluation import metrics as m
from broker.evaluation.pack import Case, Judgment

Observation = dict[str, Any]


def ranked_roots(observation: Observation) -> list[str]:
    """Each result's own root, then its other members' roots, in display order, each once."""
    roots = [
        root
        for r in observation["results"]
        for root in (r["lineage_root"], *(member["lineage_root"] for member in r["members"]))
    ]
    return list(dict.fromkeys(roots))


def _grades(judgments: list[Judgment]) -> dict[str, m.Grade]:
    return {j.lineage_root: m.Grade(j.relevance, j.required, j.forbidden) for j in judgments}


def _fused_into(observation: Observation) -> dict[str, str]:
    return {
        s["lineage_root"]: s["fused_into"]
        for s in observation["suppressed"]
        if s["reason"] == SuppressionReason.duplicate_view and s.get("lineage_root") and s.get("fused_into")
    }


def score(
    case: Case,
    judgments: list[Judgment],
    observation: Observation,
    *,
    source_id_by_uid: Mapping[str, str],
    pack_ceiling: Sensitivity | None = None,
) -> Observation:
    ranked, grades = m.fold_duplicate_views(
        ranked_roots(observation), _grades(judgments), _fused_into(observation)
    )
    observed, expected = observation["behavior"], case.expected_behavior
    a = case.assertions
    reported = {s["source_uid"]: s["outcome"] for s in observation["source_outcomes"]}
    outcomes_right = m.source_outcome_accuracy(reported, a.expected_source_outcomes)
    expansions = observation["expansions"]
    members = [c for r in observation["results"] for mem in r["members"] for c in mem["candidates"]]
    metrics = {
        "ndcg_at_10": m.ndcg_at(ranked, grades),
        "recall_at_5": m.recall_at(ranked, grades, 5),
        "recall_at_20": m.recall_at(ranked, grades, 20),
        "mrr_at_10": m.mrr_at(ranked, grades),
        "success_at_5": m.success_at(ranked, grades),
        "success_at_1": m.success_at_1(ranked, grades),
        "forbidden_at_5": m.forbidden_at(ranked, grades),
        "abstention_accuracy": m.abstention_accuracy(observed, expected),
        "abstention_precision": m.abstention_precision(observed, expected),
        "abstention_recall": m.abstention_recall(observed, expected),
        "coverage_accuracy": m.coverage_accuracy(observation["coverage"], a.expected_coverage),
        "degraded_handling": m.degraded_handling(
            observed=observed,
            expected=expected,
            coverage=observation["coverage"],
            expected_coverage=a.expected_coverage,
            outcomes_right=outcomes_right,
        ),
        "locator_success": m.fraction(
            sum(_located(e, a.expected_revisions) for e in expansions), len(expansions)
        ),
        "provenance_accuracy": m.fraction(
            sum(_provenance_ok(c, source_id_by_uid) for c in members), len(members)
        ),
        "source_outcome_accuracy": outcomes_right,
    }
    ceiling = a.sensitivity_ceiling or pack_ceiling
    observation["ranked"] = ranked
    observation["metrics"] = metrics
    observation["violations"] = violations(case, observation, ranked)
    observation["sensitivity_leaks"] = (
        0 if ceiling is None else sum(Sensitivity(c["sensitivity"]) > ceiling for c in members)
    )
    observation["families"] = sorted(
        {source_id_by_uid.get(root.split(":", 1)[0], root.split(":", 1)[0])
         for root, g in grades.items() if g.relevance > 0}
    )
    observation["tags"] = list(case.tags)
    observation["splits"] = [case.split] if case.split else []
    return observation


def _located(expansion: Mapping[str, Any], revisions: Mapping[str, str] | None) -> bool:
    if not expansion["ok"]:
        return False
    wanted = (revisions or {}).get(expansion["lineage_root"])
    return wanted is None or expansion.get("source_revision") == wanted


def _provenance_ok(candidate: Mapping[str, Any], source_id_by_uid: Mapping[str, str]) -> bool:
    """The claimed source matches the locator's, and the lineage root parses."""
    locator_source = candidate["locator"].split(":", 1)[0]
    uid, _, local = candidate["lineage_root"].partition(":")
    return (
        source_id_by_uid.get(candidate["source_uid"]) == locator_source == candidate["source_id"]
        and uid in source_id_by_uid
        and bool(local)
    )


# -- assertions ------------------------------------------------------------------------


def violations(case: Case, observation: Observation, ranked: list[str]) -> list[dict[str, str]]:
    """Every declared assertion the observation breaks, as ``{assertion, detail}``, sorted."""
    a = case.assertions
    found: list[tuple[str, str]] = []
    results = observation["results"]
    shown = set(ranked)
    contributed = {c["source_uid"] for r in results for mem in r["members"] for c in mem["candidates"]}
    suppressed = observation["suppressed"]

    for uid in a.required_sources or []:
        if uid not in contributed:
            found.append(("required_sources", f"{uid} contributed no candidate"))
    for uid in a.forbidden_sources or []:
        if uid in contributed:
            found.append(("forbidden_sources", f"{uid} contributed a candidate"))
    reasons = {s["source_uid"]: s.get("reason") for s in observation["source_outcomes"]}
    for uid, reason in (a.expected_source_reasons or {}).items():
        if reasons.get(uid) != reason:
            found.append(("expected_source_reasons", f"{uid} reason {reasons.get(uid)!r}, want {reason!r}"))
    if a.expected_exit_code is not None and observation["exit_code"] != a.expected_exit_code:
        found.append(("expected_exit_code", f"exit {observation['exit_code']}, want {a.expected_exit_code}"))
    if a.expected_truncated is not None and observation["truncated"] != a.expected_truncated:
        found.append(("expected_truncated", f"truncated is {observation['truncated']}"))
    if a.max_expansion_bytes is not None:
        if case.expected_behavior == "answer" and not observation["expansions"]:
            found.append(("max_expansion_bytes", "nothing was expanded"))
        for e in observation["expansions"]:
            if e["ok"] and e["bytes"] > a.max_expansion_bytes:
                found.append(("max_expansion_bytes", f"{e['locator']} expanded to {e['bytes']} bytes"))
    expanded = {e["lineage_root"]: e for e in observation["expansions"]}
    for root, revision in (a.expected_revisions or {}).items():
        got = expanded.get(root, {}).get("source_revision") if root in expanded else None
        if got != revision:
            found.append(("expected_revisions", f"{root} at revision {got!r}, want {revision!r}"))
    for root in a.suppressed_lineages or []:
        counted = any(
            s["reason"] == SuppressionReason.lineage_suppressed and s.get("lineage_root") == root
            and s["count"] > 0
            for s in suppressed
        )
        if root in shown or not counted:
            found.append(("suppressed_lineages", f"{root} is not withheld as lineage_suppressed"))
    for root, reason in (a.withheld_lineages or {}).items():
        withheld = any(s["reason"] == reason and s.get("lineage_root") == root for s in suppressed)
        if root in shown or not withheld:
            found.append(("withheld_lineages", f"{root} is not withheld as {reason}"))
    for root in a.visible_lineages or []:
        if root not in shown:
            found.append(("visible_lineages", f"{root} is not shown"))
    if a.expected_top_lineage is not None:
        top = results[0]["lineage_root"] if results else None
        if top != a.expected_top_lineage:
            found.append(("expected_top_lineage", f"top is {top}"))
    if a.min_results is not None and len(results) < a.min_results:
        found.append(("min_results", f"{len(results)} results"))
    if a.max_results is not None and len(results) > a.max_results:
        found.append(("max_results", f"{len(results)} results"))
    if a.max_corroborated_units is not None:
        for r in results:
            if r["corroborated_units"] > a.max_corroborated_units:
                found.append(("max_corroborated_units", f"{r['lineage_root']} has {r['corroborated_units']}"))
    if a.max_results_per_record is not None:
        records = Counter(
            (r["source_record_id"], r["content_fingerprint"])
            for r in results
            if r.get("source_record_id") and r.get("content_fingerprint")
        )
        for (record, _), count in records.items():
            if count > a.max_results_per_record:
                found.append(("max_results_per_record", f"{record} fills {count} results"))
    by_root = {r["lineage_root"]: r for r in results}
    for root, needles in (a.excerpt_contains or {}).items():
        excerpt = (by_root.get(root, {}).get("excerpt") or "").lower()
        for needle in needles:
            if needle.lower() not in excerpt:
                found.append(("excerpt_contains", f"{root} excerpt lacks {needle!r}"))
    for root in a.exact_promoted or []:
        if not by_root.get(root, {}).get("exact_promoted"):
            found.append(("exact_promoted", f"{root} is not shown exact-promoted"))
    return [{"assertion": name, "detail": detail} for name, detail in sorted(found)]

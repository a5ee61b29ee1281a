"""Gates: absolute checks a run must pass on its own, before any comparison.

Order as recorded in ``run.json``. A gate is ``pass``, ``fail`` or ``skipped``
(nothing to judge); a run passes unless a gate failed. Latency never gates:
wall time is a property of the machine, not of the change under test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from broker.evaluation.pack import Pack

PASS, FAIL, SKIPPED = "pass", "fail", "skipped"


def _gate(name: str, ok: bool | None, **fields: Any) -> dict[str, Any]:
    status = SKIPPED if ok is None else PASS if ok else FAIL
    return {"name": name, "status": status, **{k: v for k, v in fields.items() if v is not None}}


def _exactly_one(name: str, rate: Mapping[str, Any]) -> dict[str, Any]:
    value = rate["value"]
    return _gate(name, None if value is None else value >= 1.0 - 1e-12, threshold=1.0, observed=value)


def excused(case: Mapping[str, Any], names: set[str]) -> tuple[list[dict], list[dict]]:
    """Split a case's violations into (unexcused, excused by its expected_fail)."""
    hit = [v for v in case["violations"] if v["assertion"] in names]
    return [v for v in case["violations"] if v["assertion"] not in names], hit


def evaluate_gates(
    pack: Pack, cases: Sequence[Mapping[str, Any]], overall: Mapping[str, Any], *, integrity: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The gate records and the expected-failure records."""
    by_id = {c.case_id: c for c in pack.cases}
    thresholds = pack.manifest.thresholds
    gates = []

    leaks = sum(c["sensitivity_leaks"] for c in cases)
    gates.append(_gate("no_sensitivity_leaks", leaks == 0, threshold=0, observed=leaks))
    forbidden = sorted(c["case_id"] for c in cases if c["metrics"]["forbidden_at_5"] == 1.0)
    gates.append(
        _gate("no_forbidden_evidence", not forbidden, threshold=0, observed=len(forbidden),
              detail=", ".join(forbidden) or None)
    )
    gates.append(_exactly_one("locators_resolve", overall["locator_success"]))
    gates.append(_exactly_one("source_outcomes_honest", overall["source_outcome_accuracy"]))
    gates.append(_exactly_one("coverage_honest", overall["coverage_accuracy"]))
    gates.append(_exactly_one("degraded_cases_honest", overall["degraded_handling"]))

    exact = [c for c in cases if "exact" in c["tags"] and c["metrics"]["mrr_at_10"] is not None]
    want = thresholds.exact_identifier_success_at_1 if thresholds else None
    at_one = sum(c["metrics"]["mrr_at_10"] == 1.0 for c in exact) / len(exact) if exact else None
    gates.append(
        _gate("exact_identifier_success", None if want is None or at_one is None else at_one >= want,
              threshold=want, observed=at_one)
    )
    want = thresholds.abstention_accuracy if thresholds else None
    observed = overall["abstention_accuracy"]["value"]
    gates.append(
        _gate("abstention_accuracy", None if want is None or observed is None else observed >= want,
              threshold=want, observed=observed)
    )

    unexcused: list[str] = []
    expected_failures: list[dict[str, Any]] = []
    stale: list[str] = []
    for case in cases:
        spec = by_id[case["case_id"]].expected_fail
        names = set(spec.assertions) if spec else set()
        open_, hit = excused(case, names)
        unexcused += [f"{case['case_id']}: {v['assertion']}: {v['detail']}" for v in open_]
        if spec:
            record = {
                "case_id": case["case_id"],
                "reason": spec.reason,
                "assertions": [
                    {"assertion": name, "violations": [v["detail"] for v in hit if v["assertion"] == name]}
                    for name in spec.assertions
                ],
            }
            expected_failures.append(record)
            stale += [
                f"{case['case_id']}: {a['assertion']} now holds" for a in record["assertions"] if not a["violations"]
            ]
    gates.append(
        _gate("declared_assertions", not unexcused, threshold=0, observed=len(unexcused),
              detail="; ".join(unexcused) or None)
    )
    gates.append(
        _gate("expected_failures_current", None if not expected_failures else not stale,
              detail="; ".join(stale) or None)
    )
    gates.append(_gate("run_integrity", not integrity, detail="; ".join(integrity) or None))
    return gates, expected_failures

"""Per-case metrics and their aggregation. Pure: no I/O, no clock.

A metric that does not apply to a case is ``None`` (undefined), never 0: a
case with no grade-3 judgment has no MRR, a run that never abstained has no
abstention precision. Means pool only the cases where a metric is defined and
carry that count as ``n``.

Ranking metrics read a ranked list of lineage roots (one per result member, in
display order) against graded judgments (0 irrelevant … 3 authoritative).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

NDCG_K = 10
MRR_K = 10
SUCCESS_K = 5
FORBIDDEN_K = 5

RATES = (
    "ndcg_at_10",
    "success_at_1",
    "recall_at_5",
    "recall_at_20",
    "mrr_at_10",
    "success_at_5",
    "forbidden_at_5",
    "abstention_accuracy",
    "abstention_precision",
    "abstention_recall",
    "coverage_accuracy",
    "degraded_handling",
    "locator_success",
    "provenance_accuracy",
    "source_outcome_accuracy",
)
LOWER_IS_BETTER = frozenset({"forbidden_at_5"})

Value = float | None


@dataclass(frozen=True)
class Grade:
    relevance: int
    required: bool = False
    forbidden: bool = False


Grades = Mapping[str, Grade]


# -- ranking -------------------------------------------------------------------------


def ndcg_at(ranked: Sequence[str], grades: Grades, k: int = NDCG_K) -> Value:
    """Linear gain ``rel / log2(i + 1)``; undefined when no root has a positive grade."""
    ideal_grades = sorted((g.relevance for g in grades.values() if g.relevance > 0), reverse=True)
    ideal = sum(rel / math.log2(i + 1) for i, rel in enumerate(ideal_grades[:k], start=1))
    if ideal == 0:
        return None
    gained = sum(
        grades[root].relevance / math.log2(i + 1)
        for i, root in enumerate(ranked[:k], start=1)
        if root in grades and grades[root].relevance > 0
    )
    return gained / ideal


def recall_at(ranked: Sequence[str], grades: Grades, k: int) -> Value:
    """Share of required roots in the top k; undefined when nothing is required."""
    required = {root for root, g in grades.items() if g.required}
    if not required:
        return None
    return len(required & set(ranked[:k])) / len(required)


def mrr_at(ranked: Sequence[str], grades: Grades, k: int = MRR_K) -> Value:
    """1 / rank of the first grade-3 root in the top k, else 0; undefined without one."""
    if not any(g.relevance == 3 for g in grades.values()):
        return None
    for i, root in enumerate(ranked[:k], start=1):
        if root in grades and grades[root].relevance == 3:
            return 1 / i
    return 0.0


def success_at(ranked: Sequence[str], grades: Grades, k: int = SUCCESS_K) -> Value:
    """1 if a root graded 2 or more is in the top k; undefined without such a judgment."""
    useful = {root for root, g in grades.items() if g.relevance >= 2}
    if not useful:
        return None
    return 1.0 if useful & set(ranked[:k]) else 0.0


def success_at_1(ranked: Sequence[str], grades: Grades) -> Value:
    """1 if the first result's root is graded 2 or more; undefined without such a judgment."""
    return success_at(ranked, grades, 1)


def forbidden_at(ranked: Sequence[str], grades: Grades, k: int = FORBIDDEN_K) -> Value:
    """1 if a forbidden root is in the top k (lower is better); undefined without one."""
    forbidden = {root for root, g in grades.items() if g.forbidden}
    if not forbidden:
        return None
    return 1.0 if forbidden & set(ranked[:k]) else 0.0


def fold_duplicate_views(
    ranked: Sequence[str], grades: Grades, fused_into: Mapping[str, str]
) -> tuple[list[str], dict[str, Grade]]:
    """Count a withheld second view of a record as the root it was folded into.

    The ranked list keeps each root's first position; a grade moves to its target
    root, keeping the best grade and either flag.
    """
    def target(root: str) -> str:
        return fused_into.get(root, root)

    folded_ranked = list(dict.fromkeys(target(root) for root in ranked))
    folded: dict[str, Grade] = {}
    for root, grade in grades.items():
        into = target(root)
        have = folded.get(into)
        folded[into] = grade if have is None else Grade(
            max(have.relevance, grade.relevance),
            have.required or grade.required,
            have.forbidden or grade.forbidden,
        )
    return folded_ranked, folded


# -- behaviour -------------------------------------------------------------------------


def abstention_accuracy(observed: str, expected: str) -> float:
    return 1.0 if observed == expected else 0.0


def abstention_precision(observed: str, expected: str) -> Value:
    """Defined on cases the run abstained on: was abstaining right?"""
    if observed != "abstain":
        return None
    return 1.0 if expected == "abstain" else 0.0


def abstention_recall(observed: str, expected: str) -> Value:
    """Defined on cases that must abstain: did the run abstain?"""
    if expected != "abstain":
        return None
    return 1.0 if observed == "abstain" else 0.0


def coverage_accuracy(reported: str | None, expected: str | None) -> Value:
    if expected is None:
        return None
    return 1.0 if reported == expected else 0.0


def source_outcome_accuracy(reported: Mapping[str, str], expected: Mapping[str, str] | None) -> Value:
    """Share of listed sources whose reported outcome matches; an unreported one is wrong."""
    if not expected:
        return None
    return sum(reported.get(uid) == outcome for uid, outcome in expected.items()) / len(expected)


def degraded_handling(
    *,
    observed: str,
    expected: str,
    coverage: str | None,
    expected_coverage: str | None,
    outcomes_right: Value,
) -> Value:
    """Defined on cases where a source is expected not to answer (degraded or failed).

    1 when the run says so honestly: coverage reported degraded (or the whole
    query failed), the behaviour is the expected one, and every listed source
    outcome matches.
    """
    if expected_coverage != "degraded" and expected != "fail":
        return None
    said_so = coverage == "degraded" or observed == "fail"
    honest = said_so and observed == expected and outcomes_right in (None, 1.0)
    return 1.0 if honest else 0.0


def fraction(successes: int, total: int) -> Value:
    return None if total == 0 else successes / total


# -- aggregation -------------------------------------------------------------------------


def mean(values: Iterable[Value]) -> dict[str, float | int | None]:
    defined = [v for v in values if v is not None]
    return {"value": sum(defined) / len(defined) if defined else None, "n": len(defined)}


def percentile(samples: Sequence[int], p: int) -> int | None:
    """Nearest rank: the ``ceil(p * n / 100)``-th smallest sample."""
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(p * len(ordered) / 100)) - 1]


def block(cases: Sequence[Mapping]) -> dict:
    """The rates of a group of scored cases, plus its size and latency."""
    out: dict = {rate: mean(c["metrics"][rate] for c in cases) for rate in RATES}
    out["cases"] = len(cases)
    latencies = [c["latency_ns"] for c in cases]
    out["latency"] = {
        "n": len(latencies),
        "p50_ns": percentile(latencies, 50),
        "p95_ns": percentile(latencies, 95),
    }
    return out


def macro(groups: Mapping[str, Mapping]) -> dict:
    """Unweighted mean of group means; ``n`` counts groups where the rate is defined."""
    return {rate: mean(g[rate]["value"] for g in groups.values()) for rate in RATES}


def grouped(cases: Sequence[Mapping], key: str) -> dict:
    members: dict[str, list[Mapping]] = {}
    for case in cases:
        for name in case.get(key, ()):  # records scored before a grouping existed have none
            members.setdefault(name, []).append(case)
    groups = {name: block(members[name]) for name in sorted(members)}
    return {"groups": groups, "macro": macro(groups)}


def aggregate(cases: Sequence[Mapping]) -> dict:
    """``overall``, ``by_tag``, ``by_source_family`` and ``by_split`` over scored case records."""
    return {
        "cases": len(cases),
        "overall": block(cases),
        "by_tag": grouped(cases, "tags"),
        "by_source_family": grouped(cases, "families"),
        "by_split": grouped(cases, "splits"),
    }

"""Human text for runs and comparisons. An undefined rate prints as ``n/a``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from broker.evaluation.compare import Comparison

LABELS = (
    ("ndcg_at_10", "nDCG@10"),
    ("success_at_1", "S@1"),
    ("recall_at_5", "R@5"),
    ("recall_at_20", "R@20"),
    ("mrr_at_10", "MRR@10"),
    ("success_at_5", "S@5"),
    ("forbidden_at_5", "forbidden@5"),
    ("abstention_accuracy", "abstention"),
    ("abstention_precision", "abstain-P"),
    ("abstention_recall", "abstain-R"),
    ("coverage_accuracy", "coverage"),
    ("degraded_handling", "degraded"),
    ("locator_success", "locators"),
    ("provenance_accuracy", "provenance"),
    ("source_outcome_accuracy", "outcomes"),
)


def number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def _ms(ns: int | None) -> str:
    return "n/a" if ns is None else f"{ns / 1e6:.1f} ms"


def metrics_line(label: str, block: Mapping[str, Any]) -> str:
    parts = [f"{name} {number(block[rate]['value'])} (n={block[rate]['n']})" for rate, name in LABELS]
    line = f"- **{label}** — " + ", ".join(parts)
    if "latency" in block:
        lat = block["latency"]
        line += f"; latency p50 {_ms(lat['p50_ns'])}, p95 {_ms(lat['p95_ns'])}"
    return line


def summary_markdown(run: Mapping[str, Any]) -> str:
    pack, env, metrics = run["pack"], run["environment"], run["metrics"]
    commit = env.get("recall_commit") or "unknown"
    if env.get("dirty"):
        commit += " (dirty)"
    lines = [
        f"# {pack['pack_id']} — {run['status']}",
        "",
        f"- run: {run['run_id']}",
        f"- pack: {pack['version']} ({pack['content_hash'][7:19]})",
        f"- commit: {commit}",
        f"- cases: {metrics['cases']}",
        f"- elapsed: {_ms(run['elapsed_ns'])}",
    ]
    budget = run.get("latency_budget")
    if budget:
        p95 = metrics["overall"]["latency"]["p95_ns"]
        lines.append(f"- latency: p95 {_ms(p95)} against {budget['p95_latency_ms']} ms (recorded, not gated)")
    lines += ["", "## Gates", ""]
    for gate in run["gates"]:
        extra = [f"{k} {v}" for k in ("observed", "threshold") if (v := gate.get(k)) is not None]
        if gate.get("detail"):
            extra.append(gate["detail"])
        lines.append(f"- {gate['name']}: {gate['status']}" + (f" ({'; '.join(extra)})" if extra else ""))
    if run["expected_failures"]:
        lines += ["", "## Expected failures", ""]
        for record in run["expected_failures"]:
            names = ", ".join(a["assertion"] for a in record["assertions"])
            lines.append(f"- {record['case_id']} ({names}): {record['reason']}")
    lines += ["", "## Metrics", "", metrics_line("overall", metrics["overall"])]
    for name, block in metrics.get("by_split", {}).get("groups", {}).items():
        lines.append(metrics_line(f"split {name}", block))
    lines.append("")
    for dimension, title in (("by_tag", "tag"), ("by_source_family", "source family")):
        grouping = metrics[dimension]
        for name, block in grouping["groups"].items():
            lines.append(metrics_line(f"{title} {name}", block))
        lines.append(metrics_line(f"{title} macro", grouping["macro"]))
        lines.append("")
    return "\n".join(lines)


def comparison_text(comparison: Comparison) -> str:
    lines = [f"compare {comparison.baseline_run} → {comparison.candidate_run}: {comparison.status}"]
    lines += [f"blocker: {b}" for b in comparison.blockers]
    lines += [f"note: {n}" for n in comparison.notes]
    for d in comparison.regressions:
        where = d["key"]
        lines.append(
            f"regressed: {where} {d['metric']} {number(d['baseline'])} (n={d['baseline_n']}) → "
            f"{number(d['candidate'])} (n={d['candidate_n']})"
        )
    improved = [d for d in comparison.deltas if d["change"] is not None and d["change"] > 1e-9]
    for d in improved:
        lines.append(
            f"improved: {d['key']} {d['metric']} {number(d['baseline'])} → {number(d['candidate'])}"
        )
    for change in comparison.case_changes:
        worse = ", ".join(
            f"{rate} {number(v['baseline'])} → {number(v['candidate'])}" for rate, v in change["worse"].items()
        )
        lines.append(f"case {change['case_id']}: {worse}")
    if comparison.status == "pass" and not improved:
        lines.append("no rate changed")
    return "\n".join(lines) + "\n"

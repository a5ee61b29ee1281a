"""Compare a run with a baseline: any rate that drops is a regression.

Two runs are comparable only if they ran the same pack content (same content
hash) and both passed their gates. Then every rate is compared overall, in
every tag group, in every source-family group, in the source-family macro and
in each half of the pack (``split``).
A regression is a rate defined on both sides whose change is below −1e-9
(``forbidden_at_5`` is sign-flipped, so negative always means worse), a rate
the baseline had (n > 0) that the run no longer has, or a group that vanished.
Latency is never compared: it is not stable across machines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from broker.evaluation.metrics import LOWER_IS_BETTER, RATES

EPSILON = 1e-9


@dataclass
class Comparison:
    baseline_run: str
    candidate_run: str
    blockers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    deltas: list[dict[str, Any]] = field(default_factory=list)
    case_changes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def regressions(self) -> list[dict[str, Any]]:
        return [d for d in self.deltas if d["regression"]]

    @property
    def status(self) -> str:
        if self.blockers:
            return "not_comparable"
        return "regressed" if self.regressions else "pass"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "baseline_run": self.baseline_run,
            "candidate_run": self.candidate_run,
            "blockers": self.blockers,
            "notes": self.notes,
            "regressions": self.regressions,
            "deltas": self.deltas,
            "case_changes": self.case_changes,
        }


def _scopes(metrics: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Mapping[str, Any]]]:
    """(key, dimension, group, block) for every compared block."""
    yield "overall", "overall", "", metrics["overall"]
    for name, block in metrics["by_tag"]["groups"].items():
        yield f"tag:group:{name}", "tag", name, block
    for name, block in metrics["by_source_family"]["groups"].items():
        yield f"source_family:group:{name}", "source_family", name, block
    yield "source_family:macro", "source_family", "macro", metrics["by_source_family"]["macro"]
    for name, block in metrics.get("by_split", {}).get("groups", {}).items():
        yield f"split:group:{name}", "split", name, block


def _delta(key: str, dimension: str, group: str, rate: str, base: Mapping, cand: Mapping | None) -> dict:
    # n of 0 is undefined whatever the value says (the reference writes 0 there, this broker null)
    base_value, base_n = (base["value"] if base["n"] else None), base["n"]
    cand_value, cand_n = ((cand["value"] if cand["n"] else None), cand["n"]) if cand else (None, 0)
    change = None
    if base_value is not None and cand_value is not None:
        change = cand_value - base_value
        if rate in LOWER_IS_BETTER:
            change = -change
    lost = base_n > 0 and cand_n == 0
    return {
        "key": key,
        "dimension": dimension,
        "group": group,
        "metric": rate,
        "baseline": base_value,
        "baseline_n": base_n,
        "candidate": cand_value,
        "candidate_n": cand_n,
        "change": change,
        "regression": lost or (change is not None and change < -EPSILON),
    }


def compare_runs(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    baseline_cases: Sequence[Mapping[str, Any]] | None = None,
    candidate_cases: Sequence[Mapping[str, Any]] | None = None,
) -> Comparison:
    out = Comparison(baseline_run=baseline["run_id"], candidate_run=candidate["run_id"])
    b_pack, c_pack = baseline["pack"], candidate["pack"]
    if b_pack["pack_id"] != c_pack["pack_id"]:
        out.blockers.append(f"different packs: {b_pack['pack_id']} and {c_pack['pack_id']}")
    elif b_pack["content_hash"] != c_pack["content_hash"]:
        out.blockers.append(
            f"pack {c_pack['pack_id']} changed ({b_pack['content_hash'][:19]} → "
            f"{c_pack['content_hash'][:19]}); re-record the baseline with "
            f"'recall eval run --pack eval/packs/{c_pack['pack_id']} --out eval/baselines/{c_pack['pack_id']}'"
        )
    for label, run in (("baseline", baseline), ("candidate", candidate)):
        if run["status"] != "pass":
            failed = [g["name"] for g in run["gates"] if g["status"] == "fail"]
            out.blockers.append(f"the {label} run failed its gates: {', '.join(failed)}")
    b_env, c_env = baseline.get("environment", {}), candidate.get("environment", {})
    if (b_env.get("os"), b_env.get("arch")) != (c_env.get("os"), c_env.get("arch")):
        out.notes.append("runs come from different platforms; latency is not comparable (never compared)")
    if out.blockers:
        return out

    candidate_blocks = {key: block for key, _, _, block in _scopes(candidate["metrics"])}
    for key, dimension, group, block in _scopes(baseline["metrics"]):
        other = candidate_blocks.get(key)
        for rate in RATES:
            if rate not in block:
                continue  # a baseline from an implementation that does not measure it (the reference)
            out.deltas.append(_delta(key, dimension, group, rate, block[rate], other.get(rate) if other else None))
    if baseline_cases is not None and candidate_cases is not None:
        out.case_changes = _case_changes(baseline_cases, candidate_cases)
    return out


def _case_changes(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Cases in which some defined rate got worse: where to look first."""
    now = {c["case_id"]: c["metrics"] for c in after}
    changes = []
    for case in before:
        metrics = now.get(case["case_id"])
        if metrics is None:
            continue
        worse = {}
        for rate in RATES:
            old, new = case["metrics"].get(rate), metrics.get(rate)
            if old is None:
                continue
            sign = -1 if rate in LOWER_IS_BETTER else 1
            if new is None or sign * (new - old) < -EPSILON:
                worse[rate] = {"baseline": old, "candidate": new}
        if worse:
            changes.append({"case_id": case["case_id"], "worse": worse})
    return changes

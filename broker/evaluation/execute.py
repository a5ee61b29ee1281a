"""One evaluation run, start to finish: configure, query, score, aggregate, gate."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from broker.evaluation.gates import FAIL, evaluate_gates
from broker.evaluation.hashing import content_hash
from broker.evaluation.metrics import aggregate
from broker.evaluation.pack import Pack, Split, check_against_config
from broker.evaluation.runner import observe_all
from broker.evaluation.scoring import score

RUN_SCHEMA_VERSION = 1


@dataclass
class EvalRun:
    run: dict[str, Any]
    """What ``run.json`` holds: identity, environment, metrics, gates."""
    cases: list[dict[str, Any]]
    """What ``cases.jsonl`` holds: each case's observation and scores."""

    @property
    def passed(self) -> bool:
        return self.run["status"] == "pass"


def run_pack(pack: Pack, split: Split | None = None) -> EvalRun:
    """Run every case of ``pack`` (or of one half of it) against a fresh state directory."""
    if split is not None:
        pack = pack.only_split(split)
    digest = content_hash(pack)
    started = datetime.now(UTC)
    clock = time.perf_counter_ns()
    with tempfile.TemporaryDirectory(prefix=f"recall-eval-{pack.pack_id}-") as scratch:
        config = pack.config(Path(scratch))
        check_against_config(pack, config)
        observations, adapter_ids = anyio.run(observe_all, pack, config)
    elapsed = time.perf_counter_ns() - clock
    finished = datetime.now(UTC)

    source_ids = {s.source_uid: s.source_id for s in config.sources}
    by_id = {c.case_id: c for c in pack.cases}
    cases = [
        score(
            by_id[o["case_id"]],
            pack.judgments.get(o["case_id"], []),
            o,
            source_id_by_uid=source_ids,
            pack_ceiling=pack.manifest.sensitivity_ceiling,
        )
        for o in observations
    ]
    metrics = aggregate(cases)
    integrity = [f"{c['case_id']}: query error: {c['error']}" for c in cases if c["behavior"] == "error"]
    if content_hash(pack) != digest:
        integrity.append("the pack's files changed during the run")
    gates, expected_failures = evaluate_gates(pack, cases, metrics["overall"], integrity=integrity)
    run = {
        "schema_version": RUN_SCHEMA_VERSION,
        "run_id": f"{pack.pack_id}-{time.time_ns()}",
        "status": FAIL if any(g["status"] == FAIL for g in gates) else "pass",
        "started_at": started.isoformat(),
        "finished_at": finished.isoformat(),
        "elapsed_ns": elapsed,
        "pack": {"pack_id": pack.pack_id, "version": pack.manifest.version, "content_hash": digest},
        "split": split,
        "environment": _environment(pack, adapter_ids),
        "metrics": metrics,
        "gates": gates,
        "expected_failures": expected_failures,
    }
    if pack.manifest.budgets and pack.manifest.budgets.p95_latency_ms is not None:
        run["latency_budget"] = {"p95_latency_ms": pack.manifest.budgets.p95_latency_ms, "gated": False}
    return EvalRun(run=run, cases=cases)


def _environment(pack: Pack, adapter_ids: list[str]) -> dict[str, Any]:
    """The reference's environment record (eval/schema/run.schema.json there), field for field."""
    from broker import __version__

    commit, dirty = _commit()
    return {
        "recall_commit": commit or f"recall-{__version__}",
        "dirty": bool(dirty),
        "profile_hash": profile_hash(pack),
        "adapters": [_component(adapter_id) for adapter_id in adapter_ids],
        "os": sys.platform,
        "arch": platform.machine(),
        "memory_bytes": _memory_bytes(),
        "cache_policy": "cold",
        "warm": False,
        "network_access": pack.manifest.network_access,
    }


def _component(adapter_id: str) -> dict[str, str]:
    """``recall-notes/1`` -> ``{"id": "recall-notes", "version": "1"}``, as the reference records adapters."""
    name, _, version = adapter_id.rpartition("/")
    return {"id": name, "version": version} if name and version else {"id": adapter_id, "version": "unversioned"}


def profile_hash(pack: Pack) -> str:
    """The pack's configuration as committed (placeholders unfilled, so no machine path): it holds no secrets."""
    return "sha256:" + hashlib.sha256(pack.config_file.read_bytes()).hexdigest()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def _commit() -> tuple[str | None, bool | None]:
    """The checkout's commit and whether tracked files differ from it (read-only git)."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())

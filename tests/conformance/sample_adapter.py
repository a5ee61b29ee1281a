"""A small adapter over a JSON file of records, used to exercise the conformance harness.

Settings: ``file`` (records file inside the location) and ``debug_stall_ms``
(holds each search, so a cancellation can be recorded). The environment
variable ``SAMPLE_ADAPTER_FAULT`` selects a misbehaving variant:

* ``wrong-title``: search titles differ from the records;
* ``silent``: search never answers;
* ``chatty``: health writes an extra frame before its reply;
* ``crash``: the process dies on search;
* ``wedged``: ignores SIGTERM, starts a child, and blocks on search.

``SAMPLE_ADAPTER_PIDFILE`` names a file the adapter (and a wedged child)
append their pids to, so a test can check nothing outlives a case.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from adapter_sdk.protocol import (
    AdapterSkipReason,
    AsOfSupport,
    Candidate,
    Capability,
    DetailLevel,
    ErrorCode,
    ExcerptKind,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    MatchSignal,
    QueryMode,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
)
from adapter_sdk.server import Adapter, run

FAULT = os.environ.get("SAMPLE_ADAPTER_FAULT", "")
KNOWN_SETTINGS = ("debug_stall_ms", "file")


def note_pid(pid: int) -> None:
    pidfile = os.environ.get("SAMPLE_ADAPTER_PIDFILE")
    if pidfile:
        with open(pidfile, "a", encoding="utf-8") as handle:
            handle.write(f"{pid}\n")


class SampleAdapter(Adapter):
    def __init__(self) -> None:
        self.records: list[dict[str, str]] = []
        self.records_path = ""
        self.source_id = ""
        self.workdir = ""
        self.stall_seconds = 0.0

    def initialize(self, params: InitializeParams) -> Manifest:
        settings = params.settings or {}
        unknown = sorted(set(settings) - set(KNOWN_SETTINGS))
        if unknown:
            raise RpcError(
                ErrorCode.invalid_params,
                f"unknown setting {unknown[0]!r}; known settings: {', '.join(KNOWN_SETTINGS)}",
            )
        if not params.location:
            raise RpcError(ErrorCode.invalid_params, "location is required: a directory of records")
        path = Path(params.location) / settings.get("file", "records.json")
        try:
            self.records = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise RpcError(ErrorCode.invalid_params, f"cannot read records: {exc.strerror}") from None
        self.records_path = str(path)
        self.source_id = params.source_id
        self.workdir = params.workdir
        self.stall_seconds = settings.get("debug_stall_ms", 0) / 1000
        return Manifest(
            protocol_version=1,
            adapter_id="sample-records/1",
            display_name="Sample records",
            record_types=["document"],
            query_modes=[QueryMode.lexical],
            freshness_modes=[FreshnessMode.live],
            as_of_support=AsOfSupport.none,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=[Capability.search, Capability.expand],
            sensitivity=Sensitivity.internal,
        )

    async def search(self, params: SearchParams) -> SearchResult:  # type: ignore[override]
        if FAULT == "crash":
            os._exit(3)
        if FAULT == "silent":
            await anyio.sleep_forever()
        if FAULT == "wedged":
            time.sleep(3600)  # blocks the whole server, stdin included
        if self.stall_seconds:
            await anyio.sleep(self.stall_seconds)
        wanted = params.filters.record_types
        if wanted is not None and "document" not in wanted:
            return SearchResult(
                candidates=[], outcome=SearchOutcome.skipped, reason=AdapterSkipReason.record_type_mismatch
            )
        terms = params.query.lower().split()
        hits = [r for r in self.records if all(t in (r["title"] + " " + r["body"]).lower() for t in terms)]
        now = datetime.now(UTC)
        candidates = [
            Candidate(
                candidate_id=record["id"],
                source_record_id=record["id"],
                locator=f"{self.source_id}:{record['id']}",
                record_type="document",
                title=record["title"] + (" (edited)" if FAULT == "wrong-title" else ""),
                excerpt=record["body"][:60],
                excerpt_kind=ExcerptKind.preview,
                local_rank=rank,
                match_signals=[MatchSignal.lexical],
                observed_at=datetime.fromisoformat(record["updated"]),
                confirmed_at=now,
                sensitivity=Sensitivity.internal,
            )
            for rank, record in enumerate(hits[: params.limit], start=1)
        ]
        return SearchResult(candidates=candidates, outcome=SearchOutcome.success)

    def expand(self, params: ExpandParams) -> ExpandResult:
        local = params.locator.split(":", 1)[1]
        record = next((r for r in self.records if r["id"] == local), None)
        if record is None:
            raise RpcError(ErrorCode.locator_unknown, f"no record {local!r} in {self.records_path}")
        content = record["title"] if params.detail == DetailLevel.summary else record["body"]
        data = content.encode()
        truncated = len(data) > params.budget_bytes
        return ExpandResult(
            content=data[: params.budget_bytes].decode(errors="ignore"),
            truncated=truncated,
            truncation_boundary="budget_bytes" if truncated else None,
            provenance=self.records_path,
        )

    async def health(self, params: HealthParams) -> HealthResult:  # type: ignore[override]
        if FAULT == "chatty":
            sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"recall/log","params":{}}\n')
            sys.stdout.buffer.flush()
        return HealthResult(
            status=HealthStatus.healthy,
            checked_at=datetime.now(UTC),
            coverage=IndexCoverage.complete,
            record_count=len(self.records),
            diagnostics={"records_file": self.records_path, "scratch": self.workdir},
        )


def main() -> None:
    note_pid(os.getpid())
    if FAULT == "wedged":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        note_pid(child.pid)
    run(SampleAdapter())


if __name__ == "__main__":
    main()

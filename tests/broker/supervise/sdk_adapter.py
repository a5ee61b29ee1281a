"""A well-behaved adapter built on adapter_sdk, steered by its settings and queries.

Settings: ``max_concurrency`` (declared in the manifest), ``search_delay``
and ``health_delay`` (seconds each search and each probe takes), ``spawn_child`` (start a helper ``sleep`` in the
adapter's process group). Queries: ``crash`` exits mid-call with status 3,
``slow`` runs until cancelled, ``error:<code>`` answers with that error code.
Every pid it starts is appended to ``$FAULT_PIDFILE``.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime

import anyio

from adapter_sdk.protocol import (
    AsOfSupport,
    Candidate,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
)
from adapter_sdk.server import Adapter, log, run


def record_pid(pid: int) -> None:
    if path := os.environ.get("FAULT_PIDFILE"):
        with open(path, "a") as pids:
            pids.write(f"{pid}\n")


class SteeredAdapter(Adapter):
    def __init__(self) -> None:
        self.settings: dict = {}
        self.source_id = "unset"
        self.in_flight = 0
        self.max_in_flight = 0
        self.probes = 0
        self.cancelled = 0

    def initialize(self, params: InitializeParams) -> Manifest:
        self.settings = params.settings or {}
        self.source_id = params.source_id
        if self.settings.get("spawn_child"):
            child = subprocess.Popen(["sleep", "60"])
            record_pid(child.pid)
        log(f"ready as {self.source_id}")
        return Manifest(
            protocol_version=1,
            adapter_id="steered/1",
            display_name="Steered",
            record_types=["document"],
            query_modes=["lexical"],
            freshness_modes=[FreshnessMode.live],
            as_of_support=AsOfSupport.none,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=["search", "expand"],
            sensitivity=Sensitivity.internal,
            max_concurrency=self.settings.get("max_concurrency"),
        )

    async def search(self, params: SearchParams) -> SearchResult:
        if params.query == "crash":
            log("about to crash")
            os._exit(3)
        if params.query.startswith("error:"):
            code = int(params.query.split(":", 1)[1])
            raise RpcError(code, f"steered error {code}")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = 60.0 if params.query == "slow" else float(self.settings.get("search_delay", 0))
            await anyio.sleep(delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
        candidate = Candidate(
            candidate_id="c1",
            source_record_id="r1",
            locator=f"{self.source_id}:notes/{params.query}.md#L1-L2",
            record_type="document",
            title=f"About {params.query}",
            local_rank=1,
            sensitivity=Sensitivity.internal,
        )
        return SearchResult(
            candidates=[candidate],
            outcome=SearchOutcome.success,
            diagnostics={"max_in_flight": self.max_in_flight, "pid": os.getpid()},
        )

    def expand(self, params: ExpandParams) -> ExpandResult:
        return ExpandResult(content=f"content of {params.locator}", truncated=False)

    async def health(self, params: HealthParams) -> HealthResult:
        self.probes += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await anyio.sleep(float(self.settings.get("health_delay", 0)))
        finally:
            self.in_flight -= 1
        return HealthResult(
            status=HealthStatus.healthy,
            checked_at=datetime.now(UTC),
            coverage=IndexCoverage.complete,
            record_count=self.probes,
            diagnostics={"cancelled": self.cancelled},
        )


if __name__ == "__main__":
    record_pid(os.getpid())
    run(SteeredAdapter())

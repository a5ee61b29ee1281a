"""A toy adapter for the SDK's own tests; ``--async`` serves it with async handlers."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from adapter_sdk.protocol import (  # noqa: E402
    Candidate,
    HealthResult,
    Manifest,
    SearchResult,
)
from adapter_sdk.server import Adapter, current_cancellation, run  # noqa: E402

STOPPED: list[str] = []  # searches that saw their caller give up and stopped


def manifest() -> Manifest:
    return Manifest(
        protocol_version=1, adapter_id="toy/1", display_name="Toy", record_types=["note"],
        query_modes=["lexical"], freshness_modes=["live"], as_of_support="none",
        relevance_basis="lexical_span", capabilities=["search"], sensitivity="internal",
    )


def plain(rank: int, locator: str) -> dict:
    return {"candidate_id": locator, "source_record_id": locator, "locator": locator,
            "record_type": "note", "title": "plain", "local_rank": rank, "sensitivity": "internal"}


def answer(query: str) -> SearchResult | dict:
    if query == "half-broken":  # answered as plain data, its second candidate malformed
        return {"candidates": [plain(1, "toy:a"), plain(2, "toy:b\nc"), plain(3, "toy:d")],
                "outcome": "success"}
    if query == "slow":
        time.sleep(3)
    if query == "broken":
        raise ValueError("the index is broken")
    return SearchResult(
        candidates=[Candidate(candidate_id="a", source_record_id="a", locator="toy:a",
                              record_type="note", title=query, local_rank=1,
                              sensitivity="internal")],
        outcome="success",
    )


class SyncToy(Adapter):
    def initialize(self, params):
        return manifest()

    def search(self, params):
        if params.query == "until-cancelled":
            cancellation = current_cancellation()
            give_up = time.monotonic() + 10
            while not cancellation.requested and time.monotonic() < give_up:
                time.sleep(0.01)
            if cancellation.requested:
                STOPPED.append(params.query)
        return answer(params.query)

    def health(self, params):
        return HealthResult(status="healthy", checked_at=datetime.now(UTC), coverage="complete",
                            diagnostics={"stopped": len(STOPPED)})


class AsyncToy(SyncToy):
    async def search(self, params):  # type: ignore[override]
        import anyio

        if params.query == "slow":
            await anyio.sleep(3)
        return answer("fast" if params.query == "slow" else params.query)


if __name__ == "__main__":
    run(AsyncToy() if "--async" in sys.argv else SyncToy())

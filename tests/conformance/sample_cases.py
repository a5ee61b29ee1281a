"""Conformance cases for the sample adapter: the example case module for
``conformance_transcripts/record.py`` and the suite the tests record.

Each case module names the command that starts its adapter (``ARGV``) and the
cases to record (``CASES``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from adapter_sdk.conformance import FAR_DEADLINE, CaseSpec
from adapter_sdk.protocol import Method, notification_frame, request_frame

HERE = Path(__file__).resolve().parent
ARGV = [sys.executable, str(HERE / "sample_adapter.py")]
FIXTURE = HERE / "sample_fixture"


def initialize(request_id: int = 1, *, versions: tuple[int, int] = (1, 1), **settings: Any) -> dict[str, Any]:
    return request_frame(
        request_id,
        Method.initialize,
        {
            "protocol_version_min": versions[0],
            "protocol_version_max": versions[1],
            "workdir": "${WORKDIR}",
            "source_id": "samples",
            "location": "${FIXTURE}",
            "settings": settings,
        },
    )


def search(request_id: int, query: str, **filters: Any) -> dict[str, Any]:
    params = {"query": query, "filters": filters, "limit": 10, "deadline": FAR_DEADLINE}
    return request_frame(request_id, Method.search, params)


def expand(request_id: int, locator: str, detail: str, budget_bytes: int = 4096) -> dict[str, Any]:
    params = {"locator": locator, "detail": detail, "budget_bytes": budget_bytes, "deadline": FAR_DEADLINE}
    return request_frame(request_id, Method.expand, params)


def health(request_id: int) -> dict[str, Any]:
    return request_frame(request_id, Method.health, {"deadline": FAR_DEADLINE})


CONFIRMED_AT = "/result/candidates/*/confirmed_at"

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1 and the manifest declares a live document source.",
        [initialize()],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "version-rejection",
        "A range the adapter cannot speak (2..3) is refused with -32602 and no manifest.",
        [initialize(versions=(2, 3))],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "bad-settings",
        "An unknown settings key is refused at the handshake with -32602 naming the key.",
        [initialize(colour="blue")],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "A query matching two records returns both, ranked, with stable locators.",
        [initialize(), search(2, "audit")],
        fixture=FIXTURE,
        volatile=[CONFIRMED_AT],
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole source was searched.",
        [initialize(), search(2, "zeppelin")],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-skipped",
        "A record-type filter the source cannot hold is skipped before retrieval.",
        [initialize(), search(2, "audit", record_types=["task"])],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "expand-details",
        "Expand at summary and full, a budget truncation, and an unknown locator (-32002).",
        [
            initialize(),
            expand(2, "samples:rec-1", "summary"),
            expand(3, "samples:rec-1", "full"),
            expand(4, "samples:rec-1", "full", budget_bytes=10),
            expand(5, "samples:rec-404", "full"),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "health",
        "A health probe reports healthy, complete coverage, and where its data lives.",
        [initialize(), health(2)],
        fixture=FIXTURE,
        volatile=["/result/checked_at"],
    ),
    CaseSpec(
        "cancel-inflight",
        "A stalled search cancelled in flight is answered with -32007, never a late result.",
        [
            initialize(debug_stall_ms=30000),
            search(2, "audit"),
            notification_frame(Method.cancel, {"id": 2}),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "shutdown",
        "recall/shutdown is answered with {} and nothing is written after it.",
        [initialize(), request_frame(2, Method.shutdown, {})],
        fixture=FIXTURE,
    ),
]

"""Conformance cases for the sample adapter: the example case module for
``conformance_transcripts/record.py`` and the suite the tests record.

Each case module names the command that starts its adapter (``ARGV``) and the
cases to record (``CASES``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, version_rejection

HERE = Path(__file__).resolve().parent
ARGV = [sys.executable, str(HERE / "sample_adapter.py")]
FIXTURE = HERE / "sample_fixture"
SAMPLES = CaseRequests("samples")
CONFIRMED_AT = "/result/candidates/*/confirmed_at"

CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1 and the manifest declares a live document source.",
        [SAMPLES.initialize()],
        fixture=FIXTURE,
    ),
    version_rejection(SAMPLES, fixture=FIXTURE),
    CaseSpec(
        "bad-settings",
        "An unknown settings key is refused at the handshake with -32602 naming the key.",
        [SAMPLES.initialize(colour="blue")],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-ranked",
        "A query matching two records returns both, ranked, with stable locators.",
        [SAMPLES.initialize(), SAMPLES.search(2, "audit")],
        fixture=FIXTURE,
        volatile=[CONFIRMED_AT],
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole source was searched.",
        [SAMPLES.initialize(), SAMPLES.search(2, "zeppelin")],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "search-skipped",
        "A record-type filter the source cannot hold is skipped before retrieval.",
        [SAMPLES.initialize(), SAMPLES.search(2, "audit", record_types=["task"])],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "expand-details",
        "Expand at summary and full, a budget truncation, and an unknown locator (-32002).",
        [
            SAMPLES.initialize(),
            SAMPLES.expand(2, "rec-1", "summary"),
            SAMPLES.expand(3, "rec-1", "full"),
            SAMPLES.expand(4, "rec-1", "full", budget_bytes=10),
            SAMPLES.expand(5, "rec-404", "full"),
        ],
        fixture=FIXTURE,
    ),
    CaseSpec(
        "health",
        "A health probe reports healthy, complete coverage, and where its data lives.",
        [SAMPLES.initialize(), SAMPLES.health(2)],
        fixture=FIXTURE,
        volatile=["/result/checked_at"],
    ),
    cancel_inflight(
        SAMPLES,
        "audit",
        settings={"debug_stall_ms": 30000},
        description="A stalled search cancelled in flight is answered with -32007, never a late result.",
        fixture=FIXTURE,
    ),
    CaseSpec(
        "shutdown",
        "recall/shutdown is answered with {} and nothing is written after it.",
        [SAMPLES.initialize(), SAMPLES.shutdown(2)],
        fixture=FIXTURE,
    ),
]

"""Cases laid out exactly as the reference implementation records them replay here.

The files below restate that layout by hand: manifest keys in its order,
responses re-marshalled with keys sorted and the mask escaped as
``\\u003cvolatile\\u003e``, placeholders declared as prose.
"""

from __future__ import annotations

import json
from pathlib import Path

from adapter_sdk.conformance import replay_case, replay_suite

PLACEHOLDERS = {
    "FIXTURE": "absolute path of this case's fixture/ directory",
    "WORKDIR": "absolute path of a fresh, writable, empty directory",
}

INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"recall/initialize","params":{"protocol_version_min":1,'
    '"protocol_version_max":1,"workdir":"${WORKDIR}","source_id":"ledger","location":"${FIXTURE}",'
    '"settings":{SETTINGS}}}'
)
MANIFEST_FRAME = (
    '{"id":1,"jsonrpc":"2.0","result":{"adapter_id":"sample-records/1","as_of_support":"none",'
    '"capabilities":["search","expand"],"display_name":"Sample records","freshness_modes":["live"],'
    '"protocol_version":1,"query_modes":["lexical"],"record_types":["document"],'
    '"relevance_basis":"lexical_span","sensitivity":"internal"}}'
)


def write_case(
    suite: Path, name: str, requests: list[str], responses: list[str], volatile: list[str]
) -> Path:
    case = suite / name
    (case / "fixture").mkdir(parents=True)
    (case / "fixture" / "records.json").write_text(
        json.dumps([{"id": "ev-7", "title": "Quarterly audit", "body": "Audit notes",
                     "updated": "2026-01-02T03:04:05Z"}])
    )
    manifest = {
        "case": name,
        "description": "Written by hand in the reference layout.",
        "flow": "lockstep",
        "placeholders": PLACEHOLDERS,
        "volatile": volatile,
        "responses": len(responses),
    }
    (case / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (case / "request.jsonl").write_text("".join(line + "\n" for line in requests))
    (case / "response.jsonl").write_text("".join(line + "\n" for line in responses))
    return case


def search_case(suite: Path) -> Path:
    return write_case(
        suite,
        "search-ranked",
        [
            INITIALIZE.replace("{SETTINGS}", "{}"),
            '{"jsonrpc":"2.0","id":2,"method":"recall/search","params":{"query":"audit",'
            '"filters":{},"limit":10,"deadline":"2099-01-01T00:00:00Z"}}',
        ],
        [
            MANIFEST_FRAME,
            '{"id":2,"jsonrpc":"2.0","result":{"candidates":[{"candidate_id":"ev-7",'
            '"confirmed_at":"\\u003cvolatile\\u003e","excerpt":"Audit notes","excerpt_kind":"preview",'
            '"local_rank":1,"locator":"ledger:ev-7","match_signals":["lexical"],'
            '"observed_at":"2026-01-02T03:04:05Z","record_type":"document","sensitivity":"internal",'
            '"source_record_id":"ev-7","title":"Quarterly audit"}],"outcome":"success"}}',
        ],
        ["/result/candidates/*/confirmed_at"],
    )


def cancel_case(suite: Path) -> Path:
    return write_case(
        suite,
        "cancel-inflight",
        [
            INITIALIZE.replace("{SETTINGS}", '{"debug_stall_ms":30000}'),
            '{"jsonrpc":"2.0","id":2,"method":"recall/search","params":{"query":"audit",'
            '"filters":{},"limit":10,"deadline":"2099-01-01T00:00:00Z"}}',
            '{"jsonrpc":"2.0","method":"recall/cancel","params":{"id":2}}',
        ],
        [
            MANIFEST_FRAME,
            '{"jsonrpc":"2.0","id":2,"error":{"code":-32007,"message":"request cancelled"}}',
        ],
        [],
    )


def test_reference_layout_search_case_replays(tmp_path: Path, sample_argv: list[str]) -> None:
    result = replay_case(search_case(tmp_path), sample_argv)

    assert result.passed, result.detail


def test_reference_layout_cancel_case_replays(tmp_path: Path, sample_argv: list[str]) -> None:
    result = replay_case(cancel_case(tmp_path), sample_argv, timeout=10.0)

    assert result.passed, result.detail


def test_reference_layout_suite_replays_in_name_order(tmp_path: Path, sample_argv: list[str]) -> None:
    search_case(tmp_path)
    cancel_case(tmp_path)

    results = replay_suite(tmp_path, sample_argv)

    assert [(r.case, r.passed) for r in results] == [("cancel-inflight", True), ("search-ranked", True)]

"""The adapter printed in docs/writing-an-adapter.md works as printed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from adapter_sdk.conformance import FAR_DEADLINE, record_case, replay_suite
from adapter_sdk.protocol import Method, request_frame

REPO = Path(__file__).resolve().parents[2]


def documented_adapter(target: Path) -> Path:
    page = (REPO / "docs" / "writing-an-adapter.md").read_text()
    source = re.search(r"```python\n(.*?)```", page, re.S)
    assert source is not None
    target.write_text(source.group(1))
    return target


def test_documented_adapter_records_and_replays(tmp_path: Path) -> None:
    argv = [sys.executable, str(documented_adapter(tmp_path / "text_folder.py"))]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "retention.txt").write_text("Retention\nAudit logs are kept for 400 days.\n")
    (notes / "release.txt").write_text("Release\nTag, publish, announce.\n")
    initialize = request_frame(1, Method.initialize, {
        "protocol_version_min": 1, "protocol_version_max": 1, "workdir": "${WORKDIR}",
        "source_id": "notes", "location": "${FIXTURE}",
    })
    search = request_frame(2, Method.search, {
        "query": "audit logs", "filters": {}, "limit": 5, "deadline": FAR_DEADLINE,
    })
    suite = tmp_path / "conformance"

    record_case(
        suite / "search-ranked", argv, [initialize, search], description="One file matches.",
        fixture=notes, volatile=["/result/candidates/*/confirmed_at"],
    )

    recorded = (suite / "search-ranked" / "response.jsonl").read_text()
    assert '"locator":"notes:retention.txt"' in recorded
    assert [r.passed for r in replay_suite(suite, argv)] == [True]

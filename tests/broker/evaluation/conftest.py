"""A tiny pack written per test: one fixture-adapter source, a few cases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURE_ADAPTER = REPO / "tests" / "fixtures" / "fixture_adapter.py"

RECORDS = [
    {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot and compare checksums."},
    {"id": "retention", "title": "Backup retention", "body": "Snapshots are kept ninety days."},
]
CASES = [
    {"schema_version": 1, "case_id": "drill", "query": "restore drill", "expected_behavior": "answer",
     "tags": ["keyword"], "assertions": {"expected_coverage": "complete"}},
    {"schema_version": 1, "case_id": "off-topic", "query": "zeppelin mooring", "expected_behavior": "abstain",
     "tags": ["abstain"]},
]
JUDGMENTS = [
    {"schema_version": 1, "case_id": "drill", "lineage_root": "TINYNOTES1:restore", "relevance": 3, "required": True},
    {"schema_version": 1, "case_id": "drill", "lineage_root": "TINYNOTES1:retention", "relevance": 0, "forbidden": True},
]
CONFIG = f"""
[adapters.fixture]
command = "${{PYTHON}}"
args = [{json.dumps(str(FIXTURE_ADAPTER))}]
freshness_modes = ["live"]

[[sources]]
source_uid = "TINYNOTES1"
source_id = "notes"
adapter = "fixture"
location = "${{PACK}}/sources/records.json"
location_kind = "path"

[profiles.tiny]
sources = ["notes"]
"""


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture
def write_pack(tmp_path: Path) -> Callable[..., Path]:
    """Write a pack; keyword arguments replace its parts (manifest fields, cases, judgments)."""

    def write(cases=None, judgments=None, config=CONFIG, records=None, **manifest) -> Path:
        pack = tmp_path / "pack"
        (pack / "sources").mkdir(parents=True, exist_ok=True)
        (pack / "pack.json").write_text(json.dumps({
            "schema_version": 1, "pack_id": "tiny", "version": "1", "profile": "tiny",
            "cases": "cases.jsonl", "judgments": "judgments.jsonl", **manifest,
        }))
        (pack / "cases.jsonl").write_text(_jsonl(CASES if cases is None else cases))
        (pack / "judgments.jsonl").write_text(_jsonl(JUDGMENTS if judgments is None else judgments))
        (pack / "sources" / "config.toml").write_text(config)
        (pack / "sources" / "records.json").write_text(json.dumps({"records": records or RECORDS}))
        return pack

    return write

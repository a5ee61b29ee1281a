"""An adapter whose manifest and health are set by its settings, for diagnosing.

Its location is a JSON file ``{"records": [{"id", "title"}]}``; a missing file
leaves it with no records. Settings: ``health`` (status), ``coverage``,
``record_count`` / ``indexed_count`` / ``failed_count``, ``store_identity``,
``requirements`` (``[{name, command}]``), ``derives_from``,
``freshness_modes``, ``checkpoint`` (declare the capability). A search returns
every record sharing a word with the query. Started with ``--renamed`` it
reports another display name, so its recorded transcripts no longer match.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from adapter_sdk.protocol import Candidate, HealthResult, Manifest, SearchResult
from adapter_sdk.server import Adapter, run

FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)


class DoctorAdapter(Adapter):
    def __init__(self, display_name: str) -> None:
        self.display_name = display_name

    def initialize(self, params):
        self.source_id = params.source_id
        self.settings = dict(params.settings or {})
        location = Path(params.location or "")
        self.records = json.loads(location.read_text())["records"] if location.is_file() else []
        capabilities = ["search"] + (["checkpoint"] if self.settings.get("checkpoint") else [])
        return Manifest(
            protocol_version=1,
            adapter_id="doctor/1",
            display_name=self.display_name,
            record_types=["note"],
            query_modes=["lexical"],
            freshness_modes=self.settings.get("freshness_modes", ["live"]),
            as_of_support="none",
            relevance_basis="lexical_span",
            capabilities=capabilities,
            sensitivity="internal",
            derives_from=self.settings.get("derives_from"),
            executable_requirements=self.settings.get("requirements"),
        )

    def search(self, params):
        words = set(params.query.lower().split())
        hits = [r for r in self.records if words & set(r["title"].lower().split())]
        candidates = [
            Candidate(
                candidate_id=record["id"],
                source_record_id=record["id"],
                locator=f"{self.source_id}:{record['id']}",
                record_type="note",
                title=record["title"],
                local_rank=rank,
                relevance=1.0,
                match_signals=["lexical"],
                sensitivity="internal",
            )
            for rank, record in enumerate(hits[: params.limit], start=1)
        ]
        return SearchResult(candidates=candidates, outcome="success")

    def health(self, params):
        store = self.settings.get("store_identity")
        return HealthResult(
            status=self.settings.get("health", "healthy"),
            checked_at=FIXED_TIME,
            coverage=self.settings.get("coverage", "complete"),
            record_count=self.settings.get("record_count"),
            indexed_count=self.settings.get("indexed_count"),
            failed_count=self.settings.get("failed_count"),
            diagnostics={"store_identity": store} if store else None,
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    run(DoctorAdapter("Renamed" if "--renamed" in sys.argv else "Doctor"))

"""A third-party adapter that protects its own endpoint setting, for the security tests.

Its location is a JSON file ``{"records": [{"id", "title", "body", ...}]}``; a record
may carry the ``locator``, ``metadata`` and ``derived_from`` it is reported with.
Its settings schema declares ``endpoint`` (marked ``trusted_only``: it names where
the adapter would send the user's data) and ``label`` (a project may choose it).
Every ``recall/initialize`` appends the settings it received, as one JSON line,
to the file named by ``GUARDED_LOG``, so a test can prove what reached the
adapter. ``GUARDED_FLOOR`` is the sensitivity its manifest declares.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from adapter_sdk.lexical import analyze_query, tokenize  # noqa: E402
from adapter_sdk.protocol import (  # noqa: E402
    Candidate,
    ExpandResult,
    HealthResult,
    Manifest,
    SearchResult,
)
from adapter_sdk.server import Adapter, run  # noqa: E402

SETTINGS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # the mark as it travels on the wire, as an adapter in any language writes it
        "endpoint": {"type": "string", "trusted_only": True, "description": "where results go"},
        "label": {"type": "string"},
    },
}


class GuardedAdapter(Adapter):
    def initialize(self, params):
        with open(os.environ["GUARDED_LOG"], "a") as log:
            log.write(json.dumps(params.settings) + "\n")
        self.source_id = params.source_id
        self.records = json.loads(Path(params.location).read_text())["records"]
        return Manifest(
            protocol_version=1,
            adapter_id="guarded/1",
            display_name="Guarded",
            record_types=["note"],
            query_modes=["lexical"],
            freshness_modes=["live"],
            as_of_support="filter",
            relevance_basis="lexical_span",
            capabilities=["search", "expand"],
            sensitivity=os.environ.get("GUARDED_FLOOR", "internal"),
            settings_schema=SETTINGS_SCHEMA,
        )

    def search(self, params):
        terms = set(analyze_query(params.query).content_terms)
        candidates = []
        for record in self.records:
            if terms & set(tokenize(record["title"] + " " + record["body"])):
                candidates.append(
                    Candidate(
                        candidate_id=record["id"],
                        source_record_id=record["id"],
                        locator=record.get("locator", f"{self.source_id}:{record['id']}"),
                        record_type="note",
                        title=record["title"],
                        excerpt=record["body"],
                        excerpt_kind="matched",
                        local_rank=len(candidates) + 1,
                        relevance=0.9,
                        match_signals=["lexical"],
                        sensitivity="public",
                        metadata=record.get("metadata"),
                        derived_from=record.get("derived_from"),
                    )
                )
        return SearchResult(candidates=candidates, outcome="success")

    def expand(self, params):
        local = params.locator.split(":", 1)[1]
        record = next(r for r in self.records if r["id"] == local)
        return ExpandResult(content=record["body"], truncated=False)

    def health(self, params):
        return HealthResult(status="healthy", checked_at=datetime.now(UTC), coverage="complete")


if __name__ == "__main__":
    run(GuardedAdapter())

"""Small builders for fusion tests: candidates, source facts, one fuse call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from broker.contracts import Candidate, MatchSignal
from broker.fusion import FusionOutput, FusionParams, SourceFacts, fuse

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
UIDS = {"notes": "01NOTES", "tasks": "01TASKS", "mail": "01MAIL", "mirror": "01MIRROR"}
EXACT = [MatchSignal.exact_identifier]
SEMANTIC = [MatchSignal.semantic]


def cand(locator: str, rank: int = 1, **fields: Any) -> Candidate:
    """A stamped candidate; record id is the local part without its fragment."""
    source_id, local = locator.split(":", 1)
    values: dict[str, Any] = {
        "candidate_id": local,
        "source_uid": UIDS[source_id],
        "source_id": source_id,
        "source_record_id": local.split("#", 1)[0],
        "locator": locator,
        "record_type": "document",
        "title": local.split("#", 1)[0],
        "local_rank": rank,
        "sensitivity": "internal",
    }
    values.update(fields)
    return Candidate(**values)


def facts(
    source_id: str,
    prior: float = 1.0,
    *,
    intent: Mapping[str, float] | None = None,
    derives_from: str | None = None,
    location: str | None = None,
    pool: int = 20,
) -> SourceFacts:
    return SourceFacts(
        source_uid=UIDS[source_id],
        source_id=source_id,
        base_prior=prior,
        intent_priors=dict(intent or {}),
        derives_from_uid=UIDS[derives_from] if derives_from else None,
        location_key=location,
        pool_size=pool,
    )


def default_sources() -> dict[str, SourceFacts]:
    return {UIDS[s]: facts(s) for s in UIDS}


def run(
    pool: Sequence[Candidate],
    query: str = "restore drill checksum",
    sources: Sequence[SourceFacts] | None = None,
    **params: Any,
) -> FusionOutput:
    by_uid = {f.source_uid: f for f in sources} if sources else default_sources()
    for uid, f in default_sources().items():
        by_uid.setdefault(uid, f)
    params.setdefault("evaluated_at", NOW)
    return fuse(pool, by_uid, dict(UIDS), FusionParams(query=query, **params))


def locators(out: FusionOutput) -> list[str]:
    return [r.primary.locator for r in out.results]


def reasons(out: FusionOutput) -> list[tuple[str, str | None, int]]:
    return [(s.reason.value, s.lineage_root, s.count) for s in out.suppressed]

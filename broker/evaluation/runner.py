"""Run a pack's cases through the application layer every surface uses.

One broker serves the whole run (adapter processes stay up between cases, as
under ``recall serve``), and its state lives in a fresh directory, so no index
from an earlier run or from the user's own configuration is ever read. Before
the first case every profile the cases use is refreshed, as ``recall refresh``
does: a corpus whose first index takes longer than a search's deadline would
otherwise be measured while it was still being built. Each
case becomes one :class:`QueryRequest` — no result limit unless the case sets
one, an unbounded response budget unless it sets ``response_tokens`` — and then
every shown result's primary locator is expanded to check it resolves.
"""

from __future__ import annotations

import time
from typing import Any

from broker.app import Broker, open_broker
from broker.config import Config
from broker.contracts import (
    Budget,
    DetailLevel,
    ExpandRequest,
    QueryRequest,
    QueryResponse,
    RefreshRequest,
    Scope,
    Surface,
)
from broker.errors import RecallError
from broker.evaluation.pack import Case, Pack
from broker.severity import severity

BEHAVIOR = {"answered": "answer", "abstained": "abstain", "failed": "fail"}
UNBOUNDED_TOKENS = -1


def request_for(case: Case, default_profile: str) -> QueryRequest:
    scope = case.scope.model_dump(exclude_none=True) if case.scope else {}
    return QueryRequest(
        query=case.query,
        profile=case.profile or default_profile,
        scope=Scope(**scope),
        as_of=case.as_of,
        valid_at=case.valid_at,
        mode=case.mode,
        suppress_lineages=case.suppress_lineages,
        budget=Budget(
            latency_ms=case.timeout_ms or 0,
            response_tokens=case.response_tokens or UNBOUNDED_TOKENS,
            surface=Surface.structured,
        ),
        limit=case.limit or 0,
        include_stale=case.include_stale,
    )


async def observe(broker: Broker, case: Case, default_profile: str) -> dict[str, Any]:
    request = request_for(case, default_profile)
    clock = time.perf_counter_ns()
    try:
        response = await broker.query(request)
    except RecallError as err:
        # An error is not an abstention: it makes no claim about the corpus.
        return _errored(case, request, str(err), time.perf_counter_ns() - clock)
    latency = time.perf_counter_ns() - clock
    observation = _from_response(case, request, response, latency)
    observation["expansions"] = [
        await _expand(broker, result["locator"], result["lineage_root"], request.profile, case)
        for result in observation["results"]
    ]
    return observation


def _errored(case: Case, request: QueryRequest, error: str, latency: int) -> dict[str, Any]:
    return {
        "case_id": case.case_id,
        "query": case.query,
        "profile": request.profile,
        "expected_behavior": case.expected_behavior,
        "behavior": "error",
        "error": error,
        "outcome": None,
        "coverage": None,
        "exit_code": 1,
        "latency_ns": latency,
        "results": [],
        "suppressed": [],
        "source_outcomes": [],
        "expansions": [],
        "truncated": False,
        "dropped_results": 0,
    }


def _from_response(
    case: Case, request: QueryRequest, response: QueryResponse, latency: int
) -> dict[str, Any]:
    results = []
    for result in response.results:
        primary = result.primary
        results.append(
            {
                "lineage_root": result.explanation.lineage_root,
                "locator": primary.locator,
                "source_uid": primary.source_uid,
                "source_id": primary.source_id,
                "source_record_id": primary.source_record_id,
                "content_fingerprint": primary.content_fingerprint,
                "title": primary.title,
                "excerpt": primary.excerpt,
                "exact_promoted": result.explanation.exact_promoted,
                "verdict": result.verdict.value if result.verdict else None,
                "corroborated_units": result.explanation.corroboration.independent_units,
                "members": [
                    {
                        "lineage_root": member.lineage_root,
                        "candidates": [
                            {
                                "source_uid": c.source_uid,
                                "source_id": c.source_id,
                                "locator": c.locator,
                                "lineage_root": member.lineage_root,
                                "sensitivity": c.sensitivity.value,
                            }
                            for c in member.candidates
                        ],
                    }
                    for member in result.members
                ],
            }
        )
    return {
        "case_id": case.case_id,
        "query": case.query,
        "profile": request.profile,
        "expected_behavior": case.expected_behavior,
        "behavior": BEHAVIOR[response.outcome.value],
        "outcome": response.outcome.value,
        "coverage": response.coverage.value,
        "exit_code": severity(response.outcome, response.coverage).exit_code,
        "latency_ns": latency,
        "results": results,
        "suppressed": [s.to_json() for s in response.suppressed],
        "source_outcomes": [
            {
                "source_uid": r.source_uid,
                "source_id": r.source_id,
                "outcome": r.outcome.value,
                "reason": r.reason,
            }
            for r in response.source_outcomes or []
        ],
        "truncated": response.truncated,
        "dropped_results": response.dropped_results,
    }


async def _expand(broker: Broker, locator: str, root: str, profile: str, case: Case) -> dict[str, Any]:
    request = ExpandRequest(
        locator=locator,
        detail=DetailLevel.excerpt,
        budget_bytes=case.assertions.max_expansion_bytes or 0,
        profile=profile,
    )
    try:
        expanded = await broker.expand(request)
    except RecallError as err:
        return {"locator": locator, "lineage_root": root, "ok": False, "bytes": 0, "error": str(err)}
    return {
        "locator": locator,
        "lineage_root": root,
        "ok": True,
        "bytes": len(expanded.content.encode()),
        "source_revision": expanded.source_revision,
        "truncated": expanded.truncated,
    }


async def observe_all(pack: Pack, config: Config) -> tuple[list[dict[str, Any]], list[str]]:
    """Every case's observation, and the ``adapter_id`` of each adapter that answered a handshake."""
    default_profile = pack.manifest.profile or ""
    async with open_broker(config) as broker:
        for profile in dict.fromkeys(case.profile or default_profile for case in pack.cases):
            await broker.refresh(RefreshRequest(profile=profile))
        observations = [await observe(broker, case, default_profile) for case in pack.cases]
        adapter_ids = sorted({c.manifest.adapter_id for c in broker.supervisor.clients() if c.manifest})
    return observations, adapter_ids

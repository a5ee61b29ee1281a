"""Each source runs on its own clock: a slow one costs its own slot, never the others'."""

from __future__ import annotations

import pytest

from broker.app import open_broker
from broker.contracts import Budget, Coverage, Outcome, QueryRequest
from broker.severity import severity

pytestmark = pytest.mark.anyio

RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
TASK = {"id": "t1", "title": "Run the restore drill", "body": "Quarterly."}


async def test_a_slow_health_probe_does_not_spend_other_sources_timeouts(write_sources):
    # notes may take 1 s; the health probe of tasks alone takes 2.5 s. Were searches held
    # until every probe had answered, notes would time out before it was asked.
    config = write_sources(
        notes={"records": [RESTORE], "timeout_ms": 1000},
        tasks={"records": [TASK], "timeout_ms": 10000, "settings": {"health_delay_ms": 2500}},
    )
    async with open_broker(config) as broker:
        response = await broker.query(
            QueryRequest(query="restore drill", budget=Budget(latency_ms=30000))
        )
    outcomes = {r.source_id: r.outcome for r in response.source_outcomes}
    assert outcomes == {"notes": "success", "tasks": "success"}
    assert response.outcome == Outcome.answered
    assert response.coverage == Coverage.complete
    assert severity(response.outcome, response.coverage).exit_code == 0
    assert {r.primary.locator for r in response.results} == {"notes:restore", "tasks:t1"}


async def test_a_source_whose_health_outlasts_its_timeout_fails_alone(write_sources):
    config = write_sources(
        notes={"records": [RESTORE], "timeout_ms": 1000},
        tasks={"records": [TASK], "timeout_ms": 1000, "settings": {"health_delay_ms": 3000}},
    )
    async with open_broker(config) as broker:
        response = await broker.query(
            QueryRequest(query="restore drill", budget=Budget(latency_ms=30000))
        )
    reports = {r.source_id: r for r in response.source_outcomes}
    assert reports["notes"].outcome == "success"
    assert reports["tasks"].outcome == "skipped"
    assert reports["tasks"].reason == "unhealthy"
    assert severity(response.outcome, response.coverage).exit_code == 3
    assert [r.primary.locator for r in response.results] == ["notes:restore"]

"""The query core as a user meets it: blank questions, budgets spent starting adapters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from broker.app import open_broker
from broker.config import load_config
from broker.contracts import Budget, Coverage, QueryRequest, Scope, SkipReason
from broker.errors import UsageError
from broker.surfaces.mcp import Tools

pytestmark = pytest.mark.anyio

RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}


async def test_a_blank_question_is_refused_by_the_core_not_answered_as_an_abstention(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        with pytest.raises(UsageError, match="empty"):
            await broker.query(QueryRequest(query="  \t "))


async def test_mcp_returns_an_error_result_for_a_blank_question(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        result = await Tools(broker, "default").call("recall_query", {"query": "   "})
    assert result.is_error is True
    assert "empty" in result.content[0].text


async def test_a_handshake_cut_by_the_latency_budget_is_budget_exhausted_not_adapter_unavailable(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        response = await broker.query(
            QueryRequest(query="restore", budget=Budget(latency_ms=1))
        )
    (report,) = response.source_outcomes
    assert report.reason == SkipReason.budget_exhausted
    assert "latency budget" in report.diagnostics["detail"]
    assert response.coverage == Coverage.degraded


async def test_a_warm_adapter_answers_after_a_budget_was_spent_starting_it(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        await broker.query(QueryRequest(query="restore", budget=Budget(latency_ms=1)))
        response = await broker.query(QueryRequest(query="restore"))
    assert [r.primary.locator for r in response.results] == ["kb:restore"]
    assert response.coverage == Coverage.complete


async def test_a_time_range_ending_before_it_starts_is_refused_not_answered_as_empty(home):
    home(kb={"records": [RESTORE]})
    scope = Scope(since=datetime(2024, 1, 1, tzinfo=UTC), until=datetime(2023, 1, 1, tzinfo=UTC))
    async with open_broker(load_config()) as broker:
        with pytest.raises(UsageError, match="since .* is after until"):
            await broker.query(QueryRequest(query="restore", scope=scope))

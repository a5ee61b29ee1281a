"""One application layer: the same query over CLI, HTTP, MCP and Sidecar states the same facts."""

from __future__ import annotations

import json

import httpx
import pytest

from .conftest import fixture_request
from .mcp_session import mcp_session

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("profile", "server", "page_outcome"),
    [("default", "default_server", "answered"), ("wide", "wide_server", "degraded")],
)
async def test_the_same_query_gives_the_same_locators_outcome_and_coverage_on_every_surface(
    workspace, request, profile, server, page_outcome
):
    served = request.getfixturevalue(server)
    cli = json.loads(workspace.recall("query", "--json", "--profile", profile, "restore", "drill").stdout)
    http = httpx.post(served.url + "/v1/query", json={"query": "restore drill", "tier": "pointer"}, timeout=30).json()
    async with mcp_session(workspace, "--profile", profile) as session:
        tool = (await session.call_tool("recall_query", {"query": "restore drill"})).structured_content
    sidecar = json.loads(
        workspace.recall("sidecar-plugin", "--profile", profile, stdin=fixture_request("list-results.json")).stdout
    )

    def facts(pointer: dict) -> tuple:
        return (
            [r["locator"] for r in pointer["results"]],
            pointer["outcome"],
            pointer["coverage"],
            [(s["reason"], s["count"]) for s in pointer.get("suppressed", [])],
            pointer.get("source_summary", {}).get("degraded", []),
        )

    assert facts(cli) == facts(http) == facts(tool)
    assert [item["id"] for item in sidecar["page"]["items"]] == facts(cli)[0]
    assert sidecar["page"]["outcome"] == page_outcome
    assert sum(count for _, count in facts(cli)[3]) == sidecar["page"].get("omitted", {}).get("suppressed", 0)

"""``recall mcp`` through the MCP SDK's own stdio client."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from .mcp_session import mcp_session

pytestmark = pytest.mark.anyio

QUERY = "restore drill"


async def test_tools_declare_closed_input_schemas_and_instructions_explain_the_contract(workspace):
    async with mcp_session(workspace) as session:
        info = await session.initialize()  # the session's cached handshake result
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert (info.server_info.name, info.server_info.title) == ("recall", "Recall")
    for needle in ("outcome", "coverage", "pointers", "untrusted"):
        assert needle in info.instructions
    assert set(tools) == {"recall_query", "recall_expand", "recall_refresh", "recall_sources",
                          "recall_report_stale"}
    assert all(tool.input_schema["additionalProperties"] is False for tool in tools.values())
    query = tools["recall_query"].input_schema
    assert query["required"] == ["query"]
    assert {"mode", "suppress_lineages", "include_stale", "explain"} <= set(query["properties"])
    assert tools["recall_query"].output_schema["required"] == ["outcome", "coverage", "results"]


async def test_query_returns_the_pointer_tier_and_its_text_rendering(workspace):
    async with mcp_session(workspace) as session:
        result = await session.call_tool("recall_query", {"query": QUERY})
    assert result.is_error is False
    structured = result.structured_content
    assert structured["tier"] == "pointer"
    assert (structured["outcome"], structured["coverage"]) == ("answered", "complete")
    text = result.content[0].text
    assert text.startswith(f"outcome=answered coverage=complete results={len(structured['results'])}")
    assert structured["results"][0]["locator"] in text


async def test_query_with_explain_returns_the_complete_response(workspace):
    async with mcp_session(workspace) as session:
        result = await session.call_tool("recall_query", {"query": QUERY, "explain": True})
    assert "plan" in result.structured_content
    assert "explanation" in result.structured_content["results"][0]


async def test_failed_query_is_an_error_result_with_the_typed_response(workspace):
    async with mcp_session(workspace, "--profile", "wide") as session:
        result = await session.call_tool("recall_query", {"query": QUERY, "sources": ["broken"]})
    assert result.is_error is True
    assert result.structured_content["outcome"] == "failed"
    assert "Every source that was asked failed" in result.content[0].text


async def test_pre_reply_withholds_lineages_and_include_stale_shows_expired_evidence(workspace):
    async with mcp_session(workspace) as session:
        plain = (await session.call_tool("recall_query", {"query": QUERY, "explain": True})).structured_content
        shown = plain["results"][0]["members"][0]["lineage_root"]
        pre_reply = (await session.call_tool(
            "recall_query", {"query": QUERY, "mode": "pre_reply", "suppress_lineages": [shown]}
        )).structured_content
        stale = (await session.call_tool("recall_query", {"query": QUERY, "include_stale": True})).structured_content
    assert "lineage_suppressed" in [s["reason"] for s in pre_reply["suppressed"]]
    assert plain["results"][0]["primary"]["locator"] not in [r["locator"] for r in pre_reply["results"]]
    assert "expired" in [s["reason"] for s in plain["suppressed"]]
    assert "notes:tape-restore" not in [r["primary"]["locator"] for r in plain["results"]]
    assert [r["verdict"] for r in stale["results"] if r["locator"] == "notes:tape-restore"] == ["expired"]


async def test_bad_arguments_are_error_results_and_an_unknown_tool_is_a_protocol_error(workspace):
    async with mcp_session(workspace) as session:
        extra = await session.call_tool("recall_query", {"query": QUERY, "colour": "blue"})
        empty = await session.call_tool("recall_query", {"query": ""})
        with pytest.raises(MCPError):
            await session.call_tool("recall_everything", {})
    assert extra.is_error is True and "colour" in extra.content[0].text
    assert empty.is_error is True


async def test_expand_refresh_and_sources_return_structured_results(workspace):
    async with mcp_session(workspace) as session:
        expanded = await session.call_tool("recall_expand", {"locator": "notes:restore", "detail": "full"})
        missing = await session.call_tool("recall_expand", {"locator": "nowhere:x"})
        refreshed = await session.call_tool("recall_refresh", {"source_id": "kb"})
        listing = await session.call_tool("recall_sources", {})
    assert expanded.structured_content["content"] == "Restore the newest snapshot and compare checksums."
    assert expanded.content[0].text.startswith("locator=notes:restore")
    assert missing.is_error is True
    assert missing.content[0].text.startswith("nowhere:x could not be expanded (not_configured)")
    assert refreshed.is_error is False and refreshed.structured_content["outcome"] == "refreshed"
    assert refreshed.content[0].text.startswith("refresh refreshed")
    assert listing.structured_content["profile"] == "default"
    assert listing.content[0].text.startswith("profile default, sources ok")

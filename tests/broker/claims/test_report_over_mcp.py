"""``recall_report_stale`` on the real MCP server: a report verb, never an apply verb."""

from __future__ import annotations

import pytest

from tests.broker.claims.conftest import NEW_LOCATOR, NEW_QUOTE, OLD_LOCATOR, OLD_QUOTE, QUESTION
from tests.broker.surfaces.mcp_session import mcp_session

pytestmark = pytest.mark.anyio

REPORT = {"successor_locator": NEW_LOCATOR, "successor_quote": NEW_QUOTE,
          "superseded_locator": OLD_LOCATOR, "superseded_quote": OLD_QUOTE, "reporter": "mcp-agent"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def locators(result) -> list[str]:
    return [r["locator"].split("#")[0] for r in result.structured_content["results"]]


async def test_report_is_queued_and_nothing_changes_until_a_person_accepts(home):
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        tools = {t.name for t in (await session.list_tools()).tools}
        queued = await session.call_tool("recall_report_stale", REPORT)
        before = await session.call_tool("recall_query", {"query": QUESTION})
    assert "recall_report_stale" in tools
    assert not [name for name in tools if any(w in name for w in ("accept", "apply", "review"))]
    assert queued.is_error is False
    assert queued.structured_content["status"] == "queued"
    assert "Nothing changes until a person accepts it" in queued.content[0].text
    assert "notes:borg.md" in locators(before)

    claim = queued.structured_content["claim_id"]
    accepted = home.recall("review", "accept", claim, "--reviewer", "Ada")
    assert accepted.code == 0, accepted.stderr
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        after = await session.call_tool("recall_query", {"query": QUESTION})
    assert "notes:borg.md" not in locators(after)
    assert "notes:restic.md" in locators(after)


async def test_a_rejected_claim_is_refused_over_mcp_too(home):
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        queued = await session.call_tool("recall_report_stale", REPORT)
    claim = queued.structured_content["claim_id"]
    home.recall("review", "reject", claim, "--reviewer", "Ada", "--reason", "different servers")
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        again = await session.call_tool("recall_report_stale", {**REPORT, "reporter": "another-agent"})
    assert again.is_error is True
    assert again.structured_content["status"] == "refused"
    assert "rejected by Ada" in again.content[0].text


async def test_a_quote_that_is_not_verbatim_is_refused_over_mcp(home):
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        refused = await session.call_tool(
            "recall_report_stale", {**REPORT, "superseded_quote": "nightly with Borg to the box"})
    assert refused.is_error is True
    assert "does not occur verbatim" in refused.content[0].text

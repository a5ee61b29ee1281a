"""``valid_at`` on every surface that takes ``as_of``: MCP, HTTP, and the remote CLI path."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.broker.surfaces.conftest import start_server
from tests.broker.surfaces.mcp_session import mcp_session
from tests.broker.temporal.test_two_clocks_cli import QUESTION, TARGET_2024, TARGET_2025
from tests.support.recall_home import RecallHome, write_note

ELAPSED = re.compile(r"elapsed \S+")


@pytest.fixture
def home(tmp_path: Path) -> RecallHome:
    notes = tmp_path / "notes"
    write_note(notes, "target-2024.md", TARGET_2024)
    write_note(notes, "target-2025.md", TARGET_2025)
    return RecallHome.build(tmp_path, notes={"notes": notes})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_query_takes_valid_at_and_pre_reply_honours_it(home):
    async with mcp_session(home) as session:  # type: ignore[arg-type]
        tools = {t.name: t for t in (await session.list_tools()).tools}
        explicit = await session.call_tool(
            "recall_query", {"query": QUESTION, "valid_at": "2024-06-01T00:00:00Z"})
        pre_reply = await session.call_tool(
            "recall_query", {"query": QUESTION, "valid_at": "2024-06-01T00:00:00Z", "mode": "pre_reply"})
        explained = await session.call_tool(
            "recall_query", {"query": QUESTION, "valid_at": "2024-06-01T00:00:00Z", "explain": True})
    assert "valid_at" in tools["recall_query"].input_schema["properties"]
    for result in (explicit, pre_reply):
        locators = [r["locator"].split("#")[0] for r in result.structured_content["results"]]
        assert locators == ["notes:target-2024.md"]
        assert [s["reason"] for s in result.structured_content["suppressed"]] == ["not_yet_valid"]
    temporal = explained.structured_content["results"][0]["explanation"]["temporal"]
    assert (temporal["clock"], temporal["evaluated_at"]) == ("valid_time", "2024-06-01T00:00:00Z")


def test_http_query_takes_valid_at_and_the_remote_cli_prints_the_same(home):
    served = start_server(home)  # type: ignore[arg-type]
    try:
        reply = httpx.post(served.url + "/v1/query", timeout=30,
                           json={"query": QUESTION, "valid_at": "2024-06-01T00:00:00Z"})
        remote = home.recall("query", QUESTION, "--valid-at", "2024-06-01", "--server", served.url)
    finally:
        served.stop()
    assert reply.status_code == 200, reply.text
    assert [r["primary"]["locator"].split("#")[0] for r in reply.json()["results"]] == [
        "notes:target-2024.md"]
    local = home.recall("query", QUESTION, "--valid-at", "2024-06-01")
    assert remote.code == local.code == 0
    assert ELAPSED.sub("", remote.stdout) == ELAPSED.sub("", local.stdout)

"""A blank source id is refused by every surface before any source is refreshed."""

from __future__ import annotations

import httpx
import pytest

from tests.broker.surfaces.conftest import Served, Workspace
from tests.broker.surfaces.mcp_session import mcp_session

BLANK = "   "


def test_the_command_line_and_the_server_refuse_a_blank_source(workspace: Workspace, default_server: Served) -> None:
    local = workspace.recall("refresh", "--source", BLANK)
    remote = workspace.recall("refresh", "--server", default_server.url, "--source", BLANK)
    reply = httpx.post(default_server.url + "/v1/refresh", json={"source_id": BLANK})
    assert remote.returncode == local.returncode == 1
    assert "recall: --source is blank; omit it to refresh every source" in local.stderr
    assert (reply.status_code, reply.json()["error"]["code"]) == (400, "bad_request")
    assert reply.json()["error"]["message"] == "source_id is blank; omit it to refresh every source"


@pytest.mark.anyio
async def test_mcp_refuses_a_blank_source_as_invalid_arguments(workspace: Workspace) -> None:
    async with mcp_session(workspace) as session:
        result = await session.call_tool("recall_refresh", {"source_id": BLANK})
    assert result.is_error is True
    assert result.content[0].text == (
        "invalid arguments for recall_refresh: source_id is blank; omit it to refresh every source"
    )

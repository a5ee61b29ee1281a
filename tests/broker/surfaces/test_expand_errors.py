"""One expand error, one answer on every surface (``broker.errors.EXPAND_ERRORS``).

A locator the broker cannot split, or whose local part its adapter cannot
parse (out-of-range line numbers included), is a usage error: exit 1, HTTP
400, Sidecar ``invalid_request``. A locator that parses but names nothing any
more is a failed expansion: exit 4, HTTP 410, Sidecar ``not_found`` (retrying
will not bring it back). Over HTTP, a request whose locator has no colon at all
is refused as ``bad_request`` before any source is asked, as the reference does.
"""

from __future__ import annotations

import json

import httpx
import pytest

from .conftest import Served, Workspace, fixture_request
from .mcp_session import mcp_session

pytestmark = pytest.mark.anyio

CASES = [
    # locator, code, exit, http status, sidecar code
    ("no-colon-here", "malformed_locator", 1, 400, "invalid_request"),
    ("kb:drill-log.md#L1-L99999999999999999999", "locator_unknown", 1, 400, "invalid_request"),
    ("kb:../drill-log.md", "locator_unknown", 1, 400, "invalid_request"),
    ("kb:gone.md#L1-L3", "locator_expired", 4, 410, "not_found"),
]
HTTP_CODE = {"no-colon-here": "bad_request"}


@pytest.mark.parametrize(("locator", "code", "exit_code", "status", "sidecar_code"), CASES)
async def test_an_expand_error_is_stated_alike_on_every_surface(
    workspace: Workspace, default_server: Served, locator: str, code: str, exit_code: int, status: int,
    sidecar_code: str,
) -> None:
    cli = workspace.recall("expand", "--json", "--", locator)
    assert cli.returncode == exit_code, cli.stderr
    assert json.loads(cli.stdout)["error"]["code"] == code
    assert "Error" not in cli.stderr  # no Python exception name leaks

    remote = workspace.recall("expand", "--server", default_server.url, "--", locator)
    assert remote.returncode == exit_code, remote.stderr

    http = httpx.post(default_server.url + "/v1/expand", json={"locator": locator}, timeout=30)
    assert (http.status_code, http.json()["error"]["code"]) == (status, HTTP_CODE.get(locator, code))

    async with mcp_session(workspace) as session:
        tool = await session.call_tool("recall_expand", {"locator": locator})
    assert tool.is_error is True
    assert f"({code})" in tool.content[0].text

    request = json.loads(fixture_request("get-result.json"))
    request["params"]["id"] = locator
    sidecar = json.loads(workspace.recall("sidecar-plugin", stdin=json.dumps(request)).stdout)
    assert sidecar["error"]["code"] == sidecar_code

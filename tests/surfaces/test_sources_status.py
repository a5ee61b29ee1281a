"""One listing status on every surface, decided once by the core.

With every probed source unusable the listing is ``failed``: ``recall sources``
exits 4 (in process and with ``--server``), HTTP answers 503, MCP marks the
result an error and says so, Sidecar shows a danger notice naming the sources.
"""

from __future__ import annotations

import json

import httpx
import pytest

from .conftest import Workspace, fixture_request, start_server
from .mcp_session import mcp_session

pytestmark = pytest.mark.anyio

EXIT = {"ok": 0, "degraded": 3, "failed": 4}
HTTP = {"ok": 200, "degraded": 206, "failed": 503}


@pytest.mark.parametrize(("profile", "status"), [("default", "ok"), ("wide", "degraded"), ("down", "failed")])
async def test_every_surface_gives_the_listing_status_the_core_decided(
    workspace: Workspace, profile: str, status: str
) -> None:
    cli = workspace.recall("sources", "--json", "--profile", profile)
    assert cli.returncode == EXIT[status], cli.stderr
    assert json.loads(cli.stdout)["status"] == status

    served = start_server(workspace, "--profile", profile)
    try:
        http = httpx.get(served.url + "/v1/sources", timeout=30)
        remote = workspace.recall("sources", "--server", served.url)
    finally:
        served.stop()
    assert (http.status_code, http.headers["Recall-Coverage"], http.json()["status"]) == (
        HTTP[status], status, status)
    assert remote.returncode == EXIT[status], remote.stderr
    assert f"status {status}" in remote.stdout.splitlines()[0]

    async with mcp_session(workspace, "--profile", profile) as session:
        tool = await session.call_tool("recall_sources", {})
    assert tool.is_error is (status == "failed")
    assert tool.content[0].text.startswith(f"profile {profile}, sources {status}\n")

    sidecar = json.loads(
        workspace.recall("sidecar-plugin", "--profile", profile, stdin=fixture_request("list-sources.json")).stdout
    )
    notices = sidecar["page"].get("notices", [])
    if status == "ok":
        assert notices == []
    else:
        assert notices[0]["tone"] == ("danger" if status == "failed" else "warning")
        assert notices[0]["text"].startswith(f"sources {status}: ")


async def test_rows_carry_the_state_every_surface_shows(workspace: Workspace) -> None:
    cli = json.loads(workspace.recall("sources", "--json", "--profile", "wide").stdout)
    states = {row["source_id"]: row["status"] for row in cli["sources"]}
    assert states["sick"] == "unavailable"
    assert states["kb"] == "healthy"
    sidecar = json.loads(
        workspace.recall("sidecar-plugin", "--profile", "wide", stdin=fixture_request("list-sources.json")).stdout
    )
    labels = {item["id"]: item["status"]["label"] for item in sidecar["page"]["items"]}
    assert labels == {name: state.replace("_", " ") for name, state in states.items()}

"""One listing status on every surface, decided once by the core.

With every probed source unusable the listing is ``failed``: ``recall sources``
exits 4 (in process and with ``--server``), HTTP answers 503, MCP marks the
result an error and says so, Sidecar shows a danger notice naming the sources.
With one source answering but degraded, every surface says ``degraded`` (never
``ok`` beside a degraded row), and ``recall doctor`` agrees in process and
through a server.
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


@pytest.mark.parametrize(
    ("profile", "status"), [("default", "ok"), ("wide", "degraded"), ("lagging", "degraded"), ("down", "failed")]
)
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
        page = httpx.get(served.url + "/sources", timeout=30)
    finally:
        served.stop()
    assert (http.status_code, http.headers["Recall-Coverage"], http.json()["status"]) == (
        HTTP[status], status, status)
    assert page.headers["Recall-Coverage"] == status
    assert f'health <strong class="coverage-value">{status}</strong>' in page.text
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


async def test_a_degraded_row_makes_the_header_and_exit_code_degraded(workspace: Workspace) -> None:
    done = workspace.recall("sources", "--profile", "lagging")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "status degraded" in done.stdout.splitlines()[0]
    assert "1 of 2 probed sources answer from less than they hold: lagging" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("lagging "))
    assert "status degraded" in row
    sidecar = json.loads(
        workspace.recall("sidecar-plugin", "--profile", "lagging", stdin=fixture_request("list-sources.json")).stdout
    )
    assert "lagging" in sidecar["page"]["notices"][0]["text"]
    assert {i["id"]: i["status"]["label"] for i in sidecar["page"]["items"]}["lagging"] == "degraded"


def _doctor_statuses(done) -> dict[str, str]:
    report = json.loads(done.stdout)
    return {"status": report["status"], **{c["name"]: c["status"] for c in report["checks"]}}


async def test_doctor_in_process_and_through_a_server_agree_with_sources(workspace: Workspace) -> None:
    here = workspace.recall("doctor", "--json", "--profile", "lagging")
    served = start_server(workspace, "--profile", "lagging")
    try:
        there = workspace.recall("doctor", "--json", "--server", served.url)
    finally:
        served.stop()
    assert here.returncode == there.returncode == 3, here.stdout + there.stdout
    assert _doctor_statuses(here) == _doctor_statuses(there)
    assert _doctor_statuses(here)["serving"] == "degraded"
    listing = json.loads(workspace.recall("sources", "--json", "--profile", "lagging").stdout)
    assert listing["status"] == _doctor_statuses(here)["status"] == "degraded"

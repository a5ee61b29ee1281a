"""An error is reported under one code, whichever surface meets it."""

from __future__ import annotations

import json

import httpx

from tests.broker.surfaces.conftest import Served, Workspace


def sidecar_get(workspace: Workspace, locator: str) -> dict:
    request = {"protocol": "sidecar.plugin/v1", "method": "get",
               "params": {"collection": "results", "id": locator}}
    return json.loads(workspace.recall("sidecar-plugin", stdin=json.dumps(request)).stdout)


def test_a_locator_of_no_configured_source_is_not_found_everywhere_and_not_worth_retrying(
    workspace: Workspace, default_server: Served
) -> None:
    reply = httpx.post(default_server.url + "/v1/expand", json={"locator": "nowhere:x"})
    local = workspace.recall("expand", "--json", "nowhere:x")
    remote = workspace.recall("expand", "--json", "--server", default_server.url, "nowhere:x")
    sidecar = sidecar_get(workspace, "nowhere:x")["error"]
    assert (reply.status_code, reply.json()["error"]["code"]) == (404, "not_configured")
    assert remote.returncode == local.returncode == 4
    assert remote.stderr == local.stderr
    assert (sidecar["code"], sidecar["retryable"]) == ("not_found", False)


def test_a_record_its_source_no_longer_holds_is_gone_over_http_and_not_found_in_sidecar(
    workspace: Workspace, default_server: Served
) -> None:
    reply = httpx.post(default_server.url + "/v1/expand", json={"locator": "notes:no-such-note"})
    sidecar = sidecar_get(workspace, "notes:no-such-note")["error"]
    assert (reply.status_code, reply.json()["error"]["code"]) == (410, "locator_expired")
    assert (sidecar["code"], sidecar["retryable"]) == ("not_found", False)

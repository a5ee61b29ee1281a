"""Numbers no request can mean are refused as usage errors on every surface, never a crash."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from broker.app import open_broker
from broker.config import load_config
from broker.contracts import MAX_LATENCY_MS, MAX_LIMIT
from broker.surfaces.http.asgi_app import create_app
from broker.surfaces.mcp import Tools

RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
HUGE = "99999999999999999999999"


def test_a_limit_beyond_the_maximum_is_a_usage_error_not_a_traceback(home):
    user = home(kb={"records": [RESTORE]})
    run = user.recall("query", "--json", "--explain", "--limit", HUGE, "restore")
    assert run.returncode == 1
    assert f"--limit must be between 0 and {MAX_LIMIT}" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_latency_budget_beyond_a_day_is_a_usage_error_not_a_traceback(home):
    user = home(kb={"records": [RESTORE]})
    run = user.recall("query", "--budget-ms", HUGE, "restore")
    assert run.returncode == 1
    assert f"--budget-ms must be between 0 and {MAX_LATENCY_MS}" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_largest_limit_allowed_still_answers(home):
    user = home(kb={"records": [RESTORE]})
    run = user.recall("query", "--json", "--explain", "--limit", str(MAX_LIMIT), "restore")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["plan"]["limit"] == MAX_LIMIT


def test_an_enormous_expand_byte_budget_reads_the_evidence(home):
    user = home(kb={"records": [RESTORE]})
    run = user.recall("expand", "kb:restore", "--budget-bytes", HUGE, "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["content"] == "Restore the newest snapshot."


def test_http_refuses_an_enormous_latency_budget_with_bad_request(home):
    home(kb={"records": [RESTORE]})
    with TestClient(create_app(load_config(), profile="default"), base_url="http://127.0.0.1") as client:
        reply = client.post("/v1/query", json={"query": "restore", "budget": {"latency_ms": 10**16}})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "bad_request"
    assert "latency_ms" in reply.json()["error"]["message"]


@pytest.mark.anyio
async def test_mcp_refuses_an_enormous_latency_budget_as_an_error_result(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        result = await Tools(broker, "default").call(
            "recall_query", {"query": "restore", "budget_ms": 10**17}
        )
    assert result.is_error is True
    assert "budget_ms" in result.content[0].text


@pytest.mark.anyio
async def test_mcp_expands_with_an_enormous_byte_budget(home):
    home(kb={"records": [RESTORE]})
    async with open_broker(load_config()) as broker:
        result = await Tools(broker, "default").call(
            "recall_expand", {"locator": "kb:restore", "budget_bytes": 10**20}
        )
    assert result.is_error is False
    assert result.structured_content["content"] == "Restore the newest snapshot."


def test_sidecar_refuses_an_enormous_limit_as_the_cli_does(home):
    user = home(kb={"records": [RESTORE]})
    request = {"protocol": "sidecar.plugin/v1", "method": "list",
               "params": {"collection": "results", "query": "restore", "limit": 10**20}}
    run = user.recall("sidecar-plugin", stdin=json.dumps(request))
    error = json.loads(run.stdout)["error"]
    assert error["code"] == "invalid_request"
    assert error["message"] == f"limit must be between 0 and {MAX_LIMIT} (0: the profile's max_results)"

"""What ``recall serve`` refuses before any route runs, and when it refuses to start at all."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import httpx
import pytest

from .conftest import Served, start_server

TOKEN = "correct-horse-battery-staple"


@pytest.fixture(scope="module")
def token_server(workspace) -> Served:
    served = start_server(workspace, "--auth-token-env", "RECALL_TEST_TOKEN",
                          env={**workspace.env, "RECALL_TEST_TOKEN": TOKEN})
    yield served
    served.stop()


def test_missing_bearer_token_is_401_with_www_authenticate(token_server):
    reply = httpx.get(token_server.url + "/v1/health")
    assert reply.status_code == 401
    assert reply.headers["WWW-Authenticate"] == 'Bearer realm="recall"'
    assert reply.json()["error"]["code"] == "unauthorized"


def test_wrong_bearer_token_is_401(token_server):
    reply = httpx.get(token_server.url + "/v1/health", headers={"Authorization": "Bearer " + TOKEN[:-1]})
    assert reply.status_code == 401


def test_right_bearer_token_is_served(token_server):
    reply = httpx.get(token_server.url + "/v1/health", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200


def test_the_scheme_is_case_insensitive_as_rfc_7235_says(token_server):
    """A deliberate difference (docs/compatibility.md): the reference answers 401 to ``bearer``."""
    reply = httpx.get(token_server.url + "/v1/health", headers={"Authorization": f"bearer {TOKEN}"})
    assert reply.status_code == 200


def test_origin_header_is_403_origin_rejected(default_server):
    reply = httpx.get(default_server.url + "/v1/health", headers={"Origin": "https://example.test"})
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "origin_rejected"
    assert "access-control-allow-origin" not in reply.headers


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8765", "10.1.2.3"])
def test_foreign_host_header_is_refused_against_dns_rebinding(default_server, host):
    reply = httpx.get(default_server.url + "/v1/health", headers={"Host": host})
    assert reply.status_code == 421
    assert reply.json()["error"]["code"] == "host_rejected"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_headers_are_served(default_server, host):
    port = default_server.url.rsplit(":", 1)[1]
    reply = httpx.get(default_server.url + "/v1/health", headers={"Host": f"{host}:{port}"})
    assert reply.status_code == 200


def test_non_loopback_listen_without_a_token_generates_one_in_the_state_dir(workspace):
    served = start_server(workspace, "--addr", "0.0.0.0:0", lines=2)
    try:
        token_file = Path(served.first_lines[1].split(" written to ", 1)[1].split(" (", 1)[0])
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        assert token_file.is_relative_to(workspace.env["XDG_STATE_HOME"])
        token = token_file.read_text().strip()
        assert len(token) >= 43
        assert httpx.get(served.url + "/v1/health").status_code == 401
        authorized = httpx.get(served.url + "/v1/health", headers={"Authorization": f"Bearer {token}"})
        assert authorized.status_code == 200
    finally:
        served.stop()


def test_non_loopback_listen_with_an_empty_token_variable_is_refused_at_start(workspace):
    done = workspace.recall("serve", "--addr", "0.0.0.0:0", "--auth-token-env", "RECALL_UNSET_TOKEN")
    assert done.returncode == 1
    assert "RECALL_UNSET_TOKEN is empty or unset" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("addr", "fragment"),
    [("localhost:8765", "IP literal"), (":8765", "IP literal"), ("127.0.0.1", "HOST:PORT")],
)
def test_listen_address_must_be_an_ip_literal_and_port(workspace, addr, fragment):
    done = workspace.recall("serve", "--addr", addr)
    assert done.returncode == 1
    assert fragment in done.stderr


def test_log_requests_logs_method_path_status_and_duration_but_never_query_text(workspace):
    served = start_server(workspace, "--log-requests")
    try:
        httpx.post(served.url + "/v1/query", json={"query": "pelican-secret-word"}, timeout=30)
    finally:
        served.stop()
    assert re.search(r"^POST /v1/query 200 \d+\.\dms$", served.stderr, re.MULTILINE), served.stderr
    assert "pelican" not in served.stderr

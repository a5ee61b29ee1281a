"""``recall <command> --server URL`` prints what the in-process command prints."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from .conftest import RECALL, start_server
from .test_http_guard import TOKEN

ELAPSED = re.compile(r'(elapsed |"elapsed_ns": )\d+(\.\d+)?(ns|µs|ms|s)?')


def masked(text: str) -> str:
    """Only the measured durations differ between two runs of one query."""
    return ELAPSED.sub(r"\1<elapsed>", text)


@pytest.mark.parametrize(
    "flags",
    [[], ["--json"], ["--scope", "source=notes"]],
    ids=["pointer", "json", "scope"],
)
def test_query_over_the_server_prints_what_the_in_process_query_prints(workspace, default_server, flags):
    local = workspace.recall("query", *flags, "restore", "drill")
    remote = workspace.recall("query", "--server", default_server.url, *flags, "restore", "drill")
    assert remote.returncode == local.returncode == 0
    assert masked(remote.stdout) == masked(local.stdout)
    assert remote.stderr == local.stderr == ""


def test_degraded_query_over_the_server_keeps_exit_code_3(workspace, wide_server):
    local = workspace.recall("query", "--profile", "wide", "restore", "drill")
    remote = workspace.recall("query", "--server", wide_server.url, "--profile", "wide", "restore", "drill")
    assert remote.returncode == local.returncode == 3
    assert masked(remote.stdout) == masked(local.stdout)


def test_unsatisfiable_scope_over_the_server_is_the_same_error(workspace, default_server):
    local = workspace.recall("query", "--scope", "source=nowhere", "restore")
    remote = workspace.recall("query", "--server", default_server.url, "--scope", "source=nowhere", "restore")
    assert remote.returncode == local.returncode == 1
    assert remote.stderr == local.stderr
    assert local.stderr.startswith("recall: unsatisfiable scope")


def test_expand_over_the_server_prints_what_the_in_process_expand_prints(workspace, default_server):
    local = workspace.recall("expand", "--json", "notes:restore")
    remote = workspace.recall("expand", "--json", "--server", default_server.url, "notes:restore")
    assert remote.returncode == local.returncode == 0
    assert remote.stdout == local.stdout


def test_expand_failure_over_the_server_keeps_code_and_exit_4(workspace, default_server):
    local = workspace.recall("expand", "--json", "nowhere:x")
    remote = workspace.recall("expand", "--json", "--server", default_server.url, "nowhere:x")
    assert remote.returncode == local.returncode == 4
    assert remote.stdout == local.stdout


def test_sources_over_the_server_lists_what_the_in_process_listing_lists(workspace, wide_server):
    local = workspace.recall("sources", "--json", "--profile", "wide")
    remote = workspace.recall("sources", "--json", "--profile", "wide", "--server", wide_server.url)
    assert remote.returncode == local.returncode == 3

    def rows(listing: str) -> list[tuple]:
        return [(s["source_id"], s["probed"], "error" in s, s.get("health", {}).get("status"))
                for s in json.loads(listing)["sources"]]

    assert rows(remote.stdout) == rows(local.stdout)


def test_query_over_the_server_sends_the_token_named_by_auth_token_env(workspace, token_server):
    env = {**workspace.env, "MY_RECALL_TOKEN": TOKEN}
    done = subprocess.run(
        [RECALL, "query", "--server", token_server.url, "--auth-token-env", "MY_RECALL_TOKEN", "restore"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    refused = workspace.recall("query", "--server", token_server.url, "restore")
    assert refused.returncode == 1
    assert "bearer token" in refused.stderr


@pytest.fixture(scope="module")
def token_server(workspace):
    served = start_server(workspace, "--auth-token-env", "RECALL_TEST_TOKEN",
                          env={**workspace.env, "RECALL_TEST_TOKEN": TOKEN})
    yield served
    served.stop()

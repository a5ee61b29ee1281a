"""``recall doctor --server URL`` asks the server's broker and reports what the local doctor reports."""

from __future__ import annotations

import json

from tests.broker.surfaces.conftest import Served, Workspace


def checks(stdout: str) -> list[tuple[str, str]]:
    return [(check["name"], check["status"]) for check in json.loads(stdout)["checks"]]


def test_doctor_over_the_server_diagnoses_what_the_local_doctor_diagnoses(
    workspace: Workspace, wide_server: Served
) -> None:
    local = workspace.recall("doctor", "--json", "--profile", "wide")
    remote = workspace.recall("doctor", "--json", "--profile", "wide", "--server", wide_server.url)
    assert remote.returncode == local.returncode == 1, remote.stderr
    assert checks(remote.stdout) == checks(local.stdout)
    assert json.loads(remote.stdout)["profile"] == "wide"
    assert ("health", "fail") in checks(remote.stdout)


def test_doctor_over_the_server_prints_the_same_human_report(workspace: Workspace, default_server: Served) -> None:
    local = workspace.recall("doctor")
    remote = workspace.recall("doctor", "--server", default_server.url)
    assert remote.returncode == local.returncode
    assert remote.stdout.splitlines()[0] == local.stdout.splitlines()[0]
    assert [line for line in remote.stdout.splitlines() if not line.startswith(" ")] == [
        line for line in local.stdout.splitlines() if not line.startswith(" ")
    ]


def test_doctor_asks_a_server_for_the_profile_it_serves_only(workspace: Workspace, default_server: Served) -> None:
    run = workspace.recall("doctor", "--profile", "wide", "--server", default_server.url)
    assert run.returncode == 1
    assert "serves profile 'default', not 'wide'" in run.stderr


def test_conformance_replays_here_so_it_refuses_a_server(workspace: Workspace, default_server: Served) -> None:
    run = workspace.recall("doctor", "--conformance", "fixture", "--server", default_server.url)
    assert run.returncode == 1
    assert "--conformance cannot be combined with --server" in run.stderr


def test_a_token_variable_without_a_server_is_a_usage_error(workspace: Workspace) -> None:
    run = workspace.recall("doctor", "--auth-token-env", "RECALL_TOKEN")
    assert run.returncode == 1
    assert "--auth-token-env needs --server" in run.stderr

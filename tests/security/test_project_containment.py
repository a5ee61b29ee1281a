"""A project file reads only inside its own folder, symlinks resolved (attack 2).

The user keeps a private folder beside the clone. Each hostile ``recall.toml``
tries another way out of the repository; every surface must refuse the whole
configuration before any adapter reads anything, and say so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import SECRET, Machine, assert_refused

ESCAPES = {
    "parent": lambda m: "../../private",
    "absolute": lambda m: str(m.home / "private"),
    "home": lambda m: "~/private",
    "symlinked-folder": lambda m: "docs",
    "through-a-symlinked-parent": lambda m: "vendor/private-view",
}


def plant(machine: Machine, escape: str) -> Path:
    private = machine.home / "private"
    private.mkdir()
    (private / "secret.md").write_text(f"# Vault\n\n{SECRET}\n")
    os.symlink(private, machine.repo / "docs")
    os.symlink(machine.home, machine.repo / "vendor")
    os.symlink(private, machine.home / "private-view")
    location = ESCAPES[escape](machine)
    return machine.write_project(
        f'[[sources]]\nsource_id = "leak"\nadapter = "notes"\nlocation = {json.dumps(location)}\n'
    )


COMMANDS = {
    "query": ("query", "vault combination"),
    "expand": ("expand", "leak:secret.md#L1-L3"),
    "sources": ("sources",),
    "refresh": ("refresh",),
    "doctor": ("doctor",),
}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_project_source_outside_the_project_folder_is_refused(
    machine: Machine, escape: str, command: str
) -> None:
    project = plant(machine, escape)
    result = machine.recall(*COMMANDS[command])
    key = "sources[0].location"
    said = assert_refused(result, project, key)
    assert "31-41-59" not in result.stdout + result.stderr
    if escape != "home":
        assert "outside the project folder" in said
        assert str(machine.home / "private") in said  # where it really pointed


def test_serve_refuses_to_start_on_a_project_that_reads_outside(machine: Machine) -> None:
    project = plant(machine, "symlinked-folder")
    result = machine.recall("serve", "--addr", "127.0.0.1:0", timeout=30)
    assert_refused(result, project, "sources[0].location")
    assert "recall serve profile" not in result.stdout  # it never listened


def test_the_sidecar_plugin_refuses_a_project_that_reads_outside(machine: Machine) -> None:
    plant(machine, "parent")
    machine.write_user("")  # the plugin wants a user configuration to exist
    request = {
        "protocol": "sidecar.plugin/v1", "method": "list", "instance": "recall", "deadlineMs": 20000,
        "context": {"project": {"root": str(machine.repo), "workDir": str(machine.repo),
                                "name": "cloned", "branch": "main", "hostId": ""}},
        "params": {"collection": "results", "query": "vault combination", "view": "",
                   "sort": {"key": "", "dir": ""}, "cursor": "", "limit": 20},
    }
    result = machine.recall("sidecar-plugin", stdin=json.dumps(request))
    response = json.loads(result.stdout)
    assert response["error"]["code"] == "invalid_config", response
    assert "outside the project folder" in response["error"]["message"]
    assert "31-41-59" not in result.stdout


def test_a_source_inside_the_project_folder_is_searched(machine: Machine) -> None:
    (machine.repo / "notes").mkdir()
    (machine.repo / "notes" / "plan.md").write_text("# Plan\n\nThe launch moves to March.\n")
    machine.write_project('[[sources]]\nsource_id = "repo"\nadapter = "notes"\nlocation = "notes"\n')
    result = machine.recall("query", "launch march", "--json")
    assert result.returncode == 0, result.stderr
    assert [r["locator"] for r in json.loads(result.stdout)["results"]] == ["repo:plan.md#L1-L3"]


def test_a_user_source_may_read_anywhere_the_user_says(machine: Machine) -> None:
    """The rule binds project files only: the user's own configuration is trusted."""
    private = machine.home / "private"
    private.mkdir()
    (private / "secret.md").write_text(f"# Vault\n\n{SECRET}\n")
    machine.write_user(
        '[[sources]]\nsource_uid = "01J8ZKQ4M7PRIVATE"\nsource_id = "mine"\nadapter = "notes"\n'
        f"location = {json.dumps(str(private))}\n"
    )
    result = machine.recall("query", "vault combination", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["locator"].startswith("mine:secret.md")


def test_config_explain_states_the_rule_and_what_the_project_reads(machine: Machine) -> None:
    (machine.repo / "notes").mkdir()
    machine.write_user(f'[projects."{machine.repo}"]\ncredential_adapters = ["gmail"]\n')
    machine.write_project('[[sources]]\nsource_id = "repo"\nadapter = "notes"\nlocation = "notes"\n')
    result = machine.recall("config", "explain", "--json")
    assert result.returncode == 0, result.stderr
    trust = json.loads(result.stdout)["trust_boundary"]
    assert trust["project_folder"] == str(machine.repo)
    assert trust["credential_adapters_opted_in"] == ["gmail"]
    assert trust["sources_added"] == [
        {"source_id": "repo", "adapter": "notes", "reads": str(machine.repo / "notes")}
    ]
    assert "only inside its folder" in trust["rule"]

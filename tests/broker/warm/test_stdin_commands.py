"""Commands that read their input on stdin (an agent host's hook, a Sidecar plugin call) are
answered by the resident broker as in process; a hook by the broker of the host's project."""

from __future__ import annotations

import json
from pathlib import Path

from broker.warm.daemon.thin_client import exchange

from .test_same_output import differences, masked

PROMPT = "how do we run the quarterly restore drill"


def test_a_hook_reads_its_prompt_through_the_resident_broker(resident):
    resident.start()
    for action, payload in (
        ("pre-reply", PROMPT),
        ("pre-reply", json.dumps({"prompt": PROMPT})),
        ("claude-code", json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": PROMPT})),
    ):
        cold = resident.cold("hook", action, "--json", stdin=payload) if action == "pre-reply" else \
            resident.cold("hook", action, stdin=payload)
        warm = resident.recall("hook", action, "--json", stdin=payload) if action == "pre-reply" else \
            resident.recall("hook", action, stdin=payload)
        assert warm.returncode == cold.returncode == 0, (cold.stderr, warm.stderr)
        assert "restore drill" in warm.stdout.lower()
        assert masked(warm.stdout) == masked(cold.stdout), differences(warm.stdout, cold.stdout)
        assert warm.stderr == cold.stderr
    assert resident.status()["commands_served"] == 3


def test_a_hook_naming_another_project_is_answered_with_that_projects_configuration(resident):
    project = resident.root / "project"
    (project / "src").mkdir(parents=True)
    (project / "recall.toml").write_text('[profiles.project_only]\nsources = ["tasks"]\nmax_sensitivity = "internal"\n')
    payload = json.dumps({"prompt": PROMPT, "cwd": str(project / "src")})
    cold = resident.cold("hook", "pre-reply", "--json", "--profile", "project_only", stdin=payload)
    first = resident.recall("hook", "pre-reply", "--json", "--profile", "project_only", stdin=payload)
    assert first.returncode == 0, first.stderr  # in process, starting the project's broker
    resident.wait_for_starts()
    assert len(resident.sockets()) == 1  # the broker of the project's configuration
    warm = resident.recall("hook", "pre-reply", "--json", "--profile", "project_only", stdin=payload)
    assert warm.returncode == cold.returncode == 0, (cold.stderr, warm.stderr)
    assert cold.stderr == "" and "tasks:" in json.loads(cold.stdout)["context"]
    assert (masked(warm.stdout), warm.stderr) == (masked(cold.stdout), cold.stderr)
    assert not resident.status()["running"]  # the user folder's broker: none runs
    (project_socket,) = resident.sockets()
    served = _served(project_socket)
    assert served == 1
    home = resident.recall("query", "restore", "drill")  # from the user's folder: another configuration
    assert home.returncode == 0
    resident.started_broker()
    assert len(resident.sockets()) == 2


def _served(socket_path: Path) -> int:
    _, state = exchange(str(socket_path), "GET", "/v1/daemon")
    return int(state["commands_served"])


def test_installing_a_hook_stays_in_process(resident):
    done = resident.recall("hook", "install", "claude-code", "--project", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert resident.sockets() == []


SIDECAR_LIST = {
    "protocol": "sidecar.plugin/v1", "method": "list", "instance": "recall", "deadlineMs": 20000,
    "params": {"collection": "results", "query": "restore drill", "view": "", "sort": {"key": "", "dir": ""},
               "cursor": "", "limit": 20},
}


def test_a_sidecar_plugin_call_is_answered_by_the_resident_broker(resident):
    resident.start()
    for request in (
        {"protocol": "sidecar.plugin/v1", "method": "describe", "instance": "recall"},
        SIDECAR_LIST,
        {**SIDECAR_LIST, "params": {**SIDECAR_LIST["params"], "collection": "sources"}},
        {"protocol": "sidecar.plugin/v1", "method": "list", "instance": "recall", "params": "nope"},
    ):
        payload = json.dumps(request)
        cold = resident.cold("sidecar-plugin", stdin=payload)
        warm = resident.recall("sidecar-plugin", stdin=payload)
        assert warm.returncode == cold.returncode == 0, (cold.stderr, warm.stderr)
        assert warm.stdout.count("\n") == 1 and json.loads(warm.stdout)["protocol"] == "sidecar.plugin/v1"
        assert masked(warm.stdout) == masked(cold.stdout), differences(warm.stdout, cold.stdout)
        assert warm.stderr == cold.stderr
        if request is SIDECAR_LIST:
            assert "quarterly restore drill" in warm.stdout.lower()
    assert resident.status()["commands_served"] == 4

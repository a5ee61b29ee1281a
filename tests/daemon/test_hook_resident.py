"""An agent host's hook is answered by the resident broker of the host's project, as in process."""

from __future__ import annotations

import json

from .test_same_output import differences, masked

PROMPT = "how do we run the quarterly restore drill"


def test_a_hook_reads_its_prompt_through_the_resident_broker(resident):
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
    warm = resident.recall("hook", "pre-reply", "--json", "--profile", "project_only", stdin=payload)
    assert warm.returncode == cold.returncode == 0, (cold.stderr, warm.stderr)
    assert cold.stderr == "" and "tasks:" in json.loads(cold.stdout)["context"]
    assert (masked(warm.stdout), warm.stderr) == (masked(cold.stdout), cold.stderr)
    assert len(resident.sockets()) == 1  # the broker of the project's configuration
    home = resident.recall("query", "restore", "drill")  # from the user's folder: another configuration
    assert home.returncode == 0
    assert len(resident.sockets()) == 2


def test_installing_a_hook_stays_in_process(resident):
    done = resident.recall("hook", "install", "claude-code", "--project", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert resident.sockets() == []

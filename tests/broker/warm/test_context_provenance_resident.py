"""A resident broker hands the hook the same provenance as an in-process one: evidence from a
source a project's ``recall.toml`` added is labelled with that file, never called the user's."""

from __future__ import annotations

import json
import re

from broker.warm.daemon.thin_client import exchange

PROMPT = "who draws the pager rota"
JSON_STRING = r'"(?:[^"\\]|\\.)*"'


def test_project_evidence_keeps_its_label_through_the_resident_broker(resident):
    project = resident.root / "cloned"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "rota.md").write_text("# On-call handbook\n\nThe release captain draws the pager rota.\n")
    (project / "recall.toml").write_text(
        '[[sources]]\nsource_id = "repo-docs"\nadapter = "notes"\nlocation = "docs"\n\n'
        '[profiles.default]\nsources = ["repo-docs"]\n'
    )
    payload = json.dumps({"prompt": PROMPT, "cwd": str(project)})
    cold = resident.cold("hook", "pre-reply", "--json", stdin=payload)
    first = resident.recall("hook", "pre-reply", "--json", stdin=payload)
    assert first.returncode == 0, first.stderr
    resident.wait_for_starts()
    warm = resident.recall("hook", "pre-reply", "--json", stdin=payload)
    assert (cold.stderr, warm.stderr) == ("", "")

    contexts = [json.loads(run.stdout)["context"] for run in (cold, warm)]
    assert contexts[0] == contexts[1]
    context = contexts[1]
    assert "user's own sources" not in context.splitlines()[0]
    (item,) = [line for line in context.splitlines() if line.startswith("[")]
    declared = re.search(rf"added by project file: ({JSON_STRING})", item)
    assert declared is not None, item
    assert json.loads(declared[1]) == str(project / "recall.toml")
    (project_socket,) = resident.sockets()  # the broker of the project's configuration
    _, state = exchange(str(project_socket), "GET", "/v1/daemon")
    assert state["commands_served"] == 1  # the warm hook's

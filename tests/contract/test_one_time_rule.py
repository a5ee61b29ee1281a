"""An instant typed on any surface is read by one rule: what the command line refuses,
a Sidecar page refuses too, and what one accepts the other accepts."""

from __future__ import annotations

import json

import pytest

from tests.broker.surfaces.conftest import Workspace

QUERY = "restore drill"
TEXTS = [
    "2026-03-01",
    "2026-03-01T12:00:00Z",
    "2026-03-01T12:00:00+02:00",
    "2026-03-01 12:00",
    "2026-03-01Z",  # a date with a zone is no RFC 3339 instant
    "yesterday",
]


def refused_by_the_command_line(workspace: Workspace, text: str) -> bool:
    run = workspace.recall("query", "--as-of", text, QUERY)
    assert run.returncode in (0, 1, 2), run.stderr
    return run.returncode == 1 and "is not a time" in run.stderr


def refused_by_sidecar(workspace: Workspace, text: str) -> bool:
    request = {"protocol": "sidecar.plugin/v1", "method": "list",
               "params": {"collection": "results", "query": QUERY, "filters": {"since": text}}}
    reply = json.loads(workspace.recall("sidecar-plugin", stdin=json.dumps(request)).stdout)
    if "error" in reply:
        assert reply["error"]["code"] == "invalid_request" and "filter since" in reply["error"]["message"], reply
        return True
    assert "page" in reply, reply
    return False


@pytest.mark.parametrize("text", TEXTS)
def test_a_time_is_accepted_or_refused_alike_on_every_surface(workspace: Workspace, text: str) -> None:
    assert refused_by_the_command_line(workspace, text) == refused_by_sidecar(workspace, text)

"""A cold ``recall query --json`` loads what a query runs, not the other commands' machinery."""

from __future__ import annotations

import subprocess
import sys

# What `recall query --json` imports in process, up to asking the sources.
PROBE = """
import sys
import broker.surfaces.cli, broker.surfaces.daemon.client
import broker.surfaces.commands.query, broker.app, broker.config, broker.render.pointer
import broker.render.encode
print(" ".join(sorted(sys.modules)))
"""

NOT_FOR_A_QUERY = (
    "broker.expand",  # recall expand
    "broker.listing",  # recall sources
    "broker.refresh",  # recall refresh
    "broker.doctor",  # recall doctor
    "broker.render.human",  # the text tiers, when --json is not given
    "broker.render.tool",  # the MCP surface
    "pydantic",
    "starlette",
    "httpx",
)


def test_a_json_query_does_not_import_other_commands_or_surfaces() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "broker.app" in loaded
    assert sorted(loaded & set(NOT_FOR_A_QUERY)) == []

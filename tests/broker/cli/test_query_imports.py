"""A cold ``recall query --json`` loads what a query runs, not the other commands' machinery."""

from __future__ import annotations

import subprocess
import sys

# What `recall query --json` imports in process, up to asking the sources.
PROBE = """
import sys
import broker.surfaces.cli, broker.warm.daemon.thin_client
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


# A dataclass without a docstring has one written for it from inspect.signature when
# its module is imported: a fraction of a millisecond each, on every cold start.
UNDOCUMENTED = """
import dataclasses, sys
import broker.surfaces.commands.query, broker.app, broker.config, broker.render.pointer
print(" ".join(sorted(
    f"{name}.{key}" for name, module in list(sys.modules.items()) if name.startswith("broker")
    for key, value in vars(module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
    and (value.__doc__ or "").startswith(value.__name__ + "(")
)))
"""


def test_the_query_path_dataclasses_carry_their_own_docstrings() -> None:
    done = subprocess.run([sys.executable, "-c", UNDOCUMENTED], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []

"""recall mcp: the MCP tools over stdio (needs the optional ``mcp`` extra)."""

from __future__ import annotations

import argparse

from broker.surfaces.commands._common import add_profile
from broker.surfaces.streams import Streams

HELP = "serve the MCP tools over stdio"
DESCRIPTION = """Serve recall_query, recall_expand, recall_refresh and recall_sources over MCP (stdio).

Meant to be started by an agent host. Standard output carries protocol frames
only; diagnostics go to standard error. Adapters stay warm until stdin closes."""
EXIT_CODES = """exit codes:
  0  the host closed standard input
  1  error: bad usage or configuration"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.config import load_config
    from broker.errors import UsageError

    try:
        from broker.surfaces.mcp import serve_stdio
    except ImportError as exc:
        raise UsageError(f"recall mcp needs the MCP SDK ({exc}); install recall with the 'mcp' extra") from None
    import anyio

    from adapter_sdk.residence import mark_long_lived
    from broker.project_settings import vet_project_settings

    mark_long_lived()  # its adapters watch their sources at once
    config = load_config()
    profile = config.profile(args.profile).name
    anyio.run(vet_project_settings, config)  # a trust-boundary crossing stops us before serving
    serve_stdio(config, profile, io)
    return 0

"""recall mcp: the MCP tools over stdio (needs the optional ``mcp`` extra)."""

from __future__ import annotations

import argparse

from broker.surfaces.commands._common import add_profile

HELP = "serve the MCP tools over stdio"
DESCRIPTION = """Serve recall_query, recall_expand, recall_refresh and recall_sources over MCP (stdio).

Meant to be started by an agent host. Standard output carries protocol frames
only; diagnostics go to standard error. Adapters stay warm until stdin closes."""
EXIT_CODES = """exit codes:
  0  the host closed standard input
  1  error: bad usage or configuration"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)


def run(args: argparse.Namespace) -> int:
    from broker.config import load_config
    from broker.errors import UsageError

    try:
        from broker.surfaces.mcp import serve_stdio
    except ImportError as exc:
        raise UsageError(f"recall mcp needs the MCP SDK ({exc}); install recall with the 'mcp' extra") from None
    config = load_config()
    serve_stdio(config, config.profile(args.profile).name)
    return 0

"""recall sources: every configured source, probed if this profile may use it."""

from __future__ import annotations

import argparse

from broker.surfaces.commands._common import (
    add_json,
    add_profile,
    add_server,
    print_json,
    with_broker,
)
from broker.surfaces.streams import Streams

HELP = "list configured sources with their health"
DESCRIPTION = """List every configured source with its settings and, for those this profile may
search (enabled, in the profile, under its sensitivity ceiling), a live health
probe: status, index coverage, watermark and generation."""
EXIT_CODES = """exit codes (the listing's status, as its first line says):
  0  ok: every probed source is healthy
  1  error: bad usage or configuration
  3  degraded: some probed source is not healthy (it errored, is unusable, or serves
     less than it holds)
  4  failed: every probed source errored, reported no health or is unusable"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)
    add_json(parser)
    add_server(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.contracts import SourcesResponse
    from broker.render.human import render_sources
    from broker.severity import severity

    listing: SourcesResponse = with_broker(args, lambda broker: broker.sources(args.profile))
    if args.json:
        print_json(io, listing.to_json())
    else:
        text = render_sources(listing)
        io.stdout.write(text if text.endswith("\n") else text + "\n")
    return severity(listing.status).exit_code

"""recall config explain: the merged configuration and the file behind every value."""

from __future__ import annotations

import argparse

from broker.surfaces.commands._common import add_json, add_profile, print_json
from broker.surfaces.streams import Streams

HELP = "show the merged configuration and where each value came from"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "recall config explain prints the merged configuration; every value names its "
        "origin: [default], [builtin], [user <file>] or [project <file>]."
    )
    parser.add_argument(
        "config_command",
        choices=["explain"],
        metavar="explain",
        help="print every configured value with the file that supplied it",
    )
    add_profile(parser)
    add_json(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.config import load_config
    from broker.config.value_origins import explain, render_explanation

    data = explain(load_config(), args.profile)
    if args.json:
        print_json(io, data)
    else:
        io.stdout.write(render_explanation(data))
    return 0

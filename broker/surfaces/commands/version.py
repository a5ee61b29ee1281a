"""recall version."""

from __future__ import annotations

import argparse

HELP = "print the version"
EXIT_CODES = """exit codes:
  0  printed
  1  bad usage"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print as JSON")


def run(args: argparse.Namespace) -> int:
    from broker import __version__

    if args.json:
        import orjson

        print(orjson.dumps({"version": __version__, "commit": "unknown"}).decode())
    else:
        print(f"recall {__version__} (unknown)")
    return 0

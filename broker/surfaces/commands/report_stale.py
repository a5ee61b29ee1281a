"""recall report-stale: report that one note supersedes another, for a person to review."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from broker.surfaces.commands._common import add_json, add_profile
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.claims import Claim

HELP = "report that one note supersedes another (queued for review; nothing changes yet)"
DESCRIPTION = """Report that one note supersedes another, quoting each verbatim.

  recall report-stale --successor LOCATOR --successor-quote TEXT \\
                      --superseded LOCATOR --superseded-quote TEXT [--reporter NAME]

Both locators must expand under the current configuration (notes sources only,
one folder) and each quote must occur verbatim in what its locator expands to
('recall expand LOCATOR --detail full'). The claim is queued in the state
folder; nothing changes until a person accepts it with 'recall review accept'.
A claim a person rejected is refused at every later report."""
EXIT_CODES = """exit codes:
  0  queued for review
  1  refused (the reason is printed), or the queue could not be written"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--successor", required=True, metavar="LOCATOR", help="the newer note (B)")
    parser.add_argument("--successor-quote", required=True, metavar="TEXT",
                        help="a verbatim quote from B")
    parser.add_argument("--superseded", required=True, metavar="LOCATOR",
                        help="the note B replaces (A)")
    parser.add_argument("--superseded-quote", required=True, metavar="TEXT",
                        help="a verbatim quote from A")
    parser.add_argument("--reporter", metavar="NAME", help="who reports (an agent's name)")
    add_profile(parser)
    add_json(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    import anyio

    from broker.app import open_broker
    from broker.claims.stale_report import Report, report_stale
    from broker.config import load_config

    config = load_config()
    report = Report(args.successor, args.successor_quote, args.superseded, args.superseded_quote,
                    args.reporter)

    async def work() -> Claim:
        async with open_broker(config) as broker:
            return await report_stale(config, broker, report, args.profile)

    claim = anyio.run(work)
    if args.json:
        from broker.surfaces.commands._common import print_json

        print_json(io, {"status": "queued", "claim": claim.to_json(), "message": QUEUED.format(id=claim.claim_id)})
    else:
        io.stdout.write(f"claim {claim.claim_id} queued: {claim.successor.locator} supersedes "
                         f"{claim.superseded.locator}\n{QUEUED.format(id=claim.claim_id)}\n")
    return 0


QUEUED = ("Nothing changes until a person accepts it: "
          "recall review accept {id} --reviewer NAME (or reject it with --reason).")

"""recall review: a person lists, accepts or rejects reported supersession claims."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from broker.surfaces.commands._common import add_json
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.claims import Claim
    from broker.config import Config

HELP = "list, accept or reject reported supersession claims"
DESCRIPTION = """List, accept or reject the supersession claims agents reported.

  recall review [list] [--json]
  recall review accept ID --reviewer NAME
  recall review reject ID --reviewer NAME --reason TEXT

list shows each pending claim with both quotes side by side. accept writes
'supersedes:' into the successor note's front matter (a minimal edit that keeps
the rest of the file), unless either note changed since the report; the next
query withholds the superseded note. reject records the claim's key in the
rejection ledger, so the same claim is refused at every later report. ID may
be a unique prefix of at least four characters. Each decision is whole or not at
all: when the disk refuses the queue or ledger, the note is given back as it was,
the claim stays pending, and the command says so in one line (exit 1)."""
EXIT_CODES = """exit codes:
  0  listed, accepted or rejected
  1  refused (the reason is printed), or the queue or ledger could not be read or written"""

ACTIONS = ("list", "accept", "reject")
COLUMN = 38


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="list", choices=ACTIONS, help=" | ".join(ACTIONS))
    parser.add_argument("claim_id", nargs="?", metavar="ID", help="accept, reject: the claim")
    parser.add_argument("--reviewer", metavar="NAME", help="accept, reject: the person deciding")
    parser.add_argument("--reason", metavar="TEXT", help="reject: why, kept in the ledger")
    add_json(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.config import load_config
    from broker.errors import UsageError

    config = load_config()
    if args.action == "list":
        return _list(config, args.json, io)
    if not args.claim_id or not args.reviewer:
        raise UsageError(f"review {args.action} needs a claim ID and --reviewer NAME")
    from broker.claims.review import accept, reject

    if args.action == "accept":
        claim = accept(config, args.claim_id, args.reviewer)
        io.stdout.write(f"claim {claim.claim_id} accepted: {claim.successor.locator.split('#')[0]} now "
                        f"supersedes {claim.superseded.path} (its front matter says so)\n")
    else:
        claim = reject(config, args.claim_id, args.reviewer, args.reason or "")
        io.stdout.write(f"claim {claim.claim_id} rejected; it will be refused if reported again\n")
    return 0


def _list(config: Config, as_json: bool, io: Streams) -> int:
    from broker.claims.review import pending_claims

    claims = pending_claims(config)
    if as_json:
        from broker.surfaces.commands._common import print_json

        print_json(io, {"pending": [c.to_json() for c in claims]})
        return 0
    if not claims:
        io.stdout.write("no claims pending review\n")
        return 0
    for claim in claims:
        io.stdout.write(claim_block(claim) + "\n")
    return 0


def claim_block(claim: Claim) -> str:
    """One claim: who reported it, then the two records side by side, then how to decide."""
    import textwrap

    reporter = f" by {claim.reporter}" if claim.reporter else ""
    lines = [f"claim {claim.claim_id}  reported {claim.reported_at.isoformat()}{reporter}"]
    left = [f"SUCCESSOR {claim.successor.locator}", *textwrap.wrap(f'"{claim.successor.quote}"', COLUMN)]
    right = [f"SUPERSEDES {claim.superseded.locator}",
             *textwrap.wrap(f'"{claim.superseded.quote}"', COLUMN)]
    width = max(COLUMN, len(left[0]))
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else ""
        b = right[index] if index < len(right) else ""
        lines.append(f"  {a:<{width}}  | {b}".rstrip())
    lines.append(f"  decide: recall review accept {claim.claim_id} --reviewer NAME"
                 f"  |  recall review reject {claim.claim_id} --reviewer NAME --reason TEXT")
    return "\n".join(lines) + "\n"

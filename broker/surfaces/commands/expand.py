"""recall expand: read the evidence behind one locator."""

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
from broker.vocabulary import DEFAULT_EXPAND_BUDGET_BYTES

HELP = "read the evidence behind a locator"
DESCRIPTION = """Read the evidence behind a locator printed by 'recall query'.

Stateless: the locator names its source ('notes:runbooks/restore.md#L3-L9'), the
source is asked again, and the profile's sensitivity ceiling is checked again.
Exit 4 when the locator cannot be expanded (unknown source, denied, expired).

Detail levels widen, each one starting with what the one before it shows. For a
note section (a locator's #L<a>-L<b>):
  summary  the title and the first line of text
  excerpt  the section, cut at 12 lines
  full     the whole section, however long (for a section of 12 lines or
           fewer this is what excerpt shows)
  context  the section with 20 lines either side, from the same note
A note's path alone ('notes:runbooks/restore.md') names the whole note.
Other sources read the same way over their own records: a task's text, then its
fields and annotations; a mail thread's headers, then its messages."""
EXIT_CODES = """exit codes:
  0  the evidence was read
  1  error: bad usage (a malformed locator, or one its source cannot parse) or configuration
  4  the locator could not be expanded: unknown source, denied, expired, unreachable"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("locator", help="<source_id>:<local part>, as printed by recall query")
    parser.add_argument("--detail", choices=["summary", "excerpt", "full", "context"],
                        default="excerpt", help="how much to read: summary, excerpt (default), full "
                        "or context; see above")
    parser.add_argument("--budget-bytes", "--budget", dest="budget_bytes", type=int, default=0,
                        metavar="N", help=f"most bytes of content (default {DEFAULT_EXPAND_BUDGET_BYTES})")
    add_profile(parser)
    add_json(parser)
    add_server(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.contracts import DetailLevel, ExpandRequest
    from broker.errors import ExpandError, UsageError
    from broker.render.human import render_expand

    if args.budget_bytes < 0:
        raise UsageError("--budget-bytes must be 0 or more")
    request = ExpandRequest(
        locator=args.locator,
        detail=DetailLevel(args.detail),
        budget_bytes=args.budget_bytes,
        profile=args.profile,
    )
    try:
        response = with_broker(args, lambda broker: broker.expand(request))
    except ExpandError as exc:
        if args.json:
            print_json(io, {"error": {"code": str(exc.code), "message": exc.message}})
        io.stderr.write(f"recall: {args.locator} could not be expanded: {exc.message}\n")
        return exc.stated.exit_code
    if args.json:
        print_json(io, response.to_json())
    else:
        text = render_expand(response)
        io.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0

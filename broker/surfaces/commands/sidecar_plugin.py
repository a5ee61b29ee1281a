"""recall sidecar-plugin: answer one Sidecar plugin request (stdin) with one response (stdout)."""

from __future__ import annotations

import argparse
import os

from broker.surfaces.commands._common import add_profile
from broker.surfaces.streams import Streams

HELP = "answer one Sidecar plugin request on stdin"
DESCRIPTION = """Answer one Sidecar plugin request (sidecar.plugin/v1 or v1-draft).

Not meant to be typed: Sidecar runs it once per call from a plugins.external
entry, {"id": "recall", "command": ["recall", "sidecar-plugin"]}. One JSON
object is read from standard input and one JSON object is written to standard
output; diagnostics go to standard error. Typed failures exit 0 like answers;
a non-zero exit means the response could not be written."""
EXIT_CODES = """exit codes:
  0  a response was written (typed failures included)
  1  bad usage, or the response could not be written"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.surfaces.sidecar import MAX_REQUEST_BYTES, answer, encode

    raw = io.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    if args.resident is not None:
        # in the resident broker this thread's output is captured apart, and adapters
        # write to pipes of their own: nothing else can reach this command's stdout
        io.stdout.write(encode(answer(raw, io.stderr, args.profile, args.resident)).decode())
        return 0
    # Only the response may reach stdout: while answering, descriptor 1 points at stderr.
    io.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    try:
        response = answer(raw, io.stderr, args.profile)
    finally:
        io.stdout.flush()
        os.dup2(wire, 1)
        os.close(wire)
    try:
        io.stdout.buffer.write(encode(response))
        io.stdout.flush()
    except OSError as exc:
        io.stderr.write(f"recall: could not write the response: {exc}\n")
        return 1
    return 0

"""recall refresh: rebuild or re-check what sources index, outside any query budget."""

from __future__ import annotations

import argparse
import time
from typing import TextIO

from broker.surfaces.commands._common import (
    add_json,
    add_profile,
    add_server,
    print_json,
    with_broker,
)
from broker.surfaces.streams import Streams

HELP = "rebuild or re-check source indexes"
DESCRIPTION = """Refresh the indexes of the profile's sources (or one --source).

Indexed sources re-check their files and re-read only what changed; --full
rebuilds from scratch. A refresh is not bound by the query timeout, so a large
first build finishes. Progress is shown on a terminal."""
EXIT_CODES = """exit codes:
  0  refreshed; sources that keep no index are listed as skipped
  1  error: bad usage or configuration
  3  degraded: some source failed to refresh or is unhealthy afterwards
  4  failed: no source was refreshed (also when none keeps an index)"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", metavar="ID", help="refresh only this source")
    parser.add_argument("--full", action="store_true", help="rebuild from scratch")
    parser.add_argument("--explain", action="store_true",
                        help="print each source's status, reason, index generation and watermarks")
    add_profile(parser)
    add_json(parser)
    add_server(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.contracts import RefreshRequest
    from broker.errors import UsageError
    from broker.render.human import render_refresh
    from broker.requests import InvalidRequest, check_refresh
    from broker.severity import severity

    try:
        request = check_refresh(RefreshRequest(profile=args.profile, source_id=args.source, full=args.full))
    except InvalidRequest as exc:
        raise UsageError(exc.describe({"source_id": "--source"})) from None
    progress = _Progress(io.stderr) if io.stderr_is_terminal and not args.json else None
    try:
        response = with_broker(args, lambda broker: broker.refresh(request, progress))
    finally:
        if progress:
            progress.stop()
    if args.json:
        print_json(io, response.to_json())
    else:
        text = render_refresh(response, explain=args.explain)
        io.stdout.write(text if text.endswith("\n") else text + "\n")
    return severity(response.outcome).exit_code


class _Progress:
    """A live line on stderr naming the sources still refreshing and the time spent."""

    def __init__(self, stderr: TextIO) -> None:
        from rich.console import Console
        from rich.status import Status

        self._running: dict[str, float] = {}
        self._status = Status("refreshing", console=Console(file=stderr))
        self._status.start()

    def __call__(self, source_id: str, event: str) -> None:
        if event == "started":
            self._running[source_id] = time.monotonic()
        else:
            started = self._running.pop(source_id, time.monotonic())
            self._status.console.print(
                f"  {source_id} {event} in {time.monotonic() - started:.1f}s", highlight=False
            )
        names = ", ".join(self._running) or "finishing"
        self._status.update(f"refreshing {names}")

    def stop(self) -> None:
        self._status.stop()

"""recall refresh: rebuild or re-check what sources index, outside any query budget."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, TextIO

from broker.surfaces.commands._common import (
    add_json,
    add_profile,
    add_server,
    print_json,
    with_broker,
)
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.refresh import RefreshEvent

HELP = "rebuild or re-check source indexes"
DESCRIPTION = """Refresh the indexes of the profile's sources (or one --source).

Indexed sources re-check their files and re-read only what changed; --full
rebuilds from scratch. A refresh is not bound by the query timeout, so a large
first build finishes. On a terminal, stderr shows each source's progress and
the work it says it has left (chunks not embedded yet, say)."""
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
    """A live line on stderr naming the sources still refreshing, the work each says it
    has left, and the time spent; a line for each source as it ends."""

    def __init__(self, stderr: TextIO) -> None:
        from rich.console import Console
        from rich.status import Status

        self._running: dict[str, float] = {}
        self._work_left: dict[str, str] = {}
        self._status = Status("refreshing", console=Console(file=stderr))
        self._status.start()

    def __call__(self, event: RefreshEvent) -> None:
        from broker.refresh import RefreshStage

        source_id = event.source_id
        if event.stage == RefreshStage.started:
            self._running[source_id] = time.monotonic()
        elif event.stage == RefreshStage.working:
            self._work_left[source_id] = _first_clause(event.text)
        else:
            started = self._running.pop(source_id, time.monotonic())
            self._work_left.pop(source_id, None)
            self._status.console.print(
                f"  {source_id} {event.text} in {time.monotonic() - started:.1f}s", highlight=False
            )
        names = ", ".join(
            f"{name} ({self._work_left[name]})" if name in self._work_left else name
            for name in self._running
        )
        self._status.update(f"refreshing {names or 'finishing'}")

    def stop(self) -> None:
        self._status.stop()


WORK_LEFT_WIDTH = 72


def _first_clause(detail: str) -> str:
    """A source's account of its work left, fitted to the live line: its first clause
    ("first build: 1234 notes are waiting to be indexed"), cut to ``WORK_LEFT_WIDTH``."""
    clause = detail.split("; ", 1)[0]
    return clause if len(clause) <= WORK_LEFT_WIDTH else clause[: WORK_LEFT_WIDTH - 1] + "…"

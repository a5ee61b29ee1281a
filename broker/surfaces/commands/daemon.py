"""recall daemon: show or stop the resident broker that commands start on demand."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING

from broker.environment import DAEMON_ENV, DAEMON_IDLE_ENV
from broker.surfaces.commands._common import add_json, print_json

if TYPE_CHECKING:
    from broker.surfaces.daemon.place import Place

HELP = "show, start or stop the resident broker commands start on demand"
DESCRIPTION = f"""Show, start or stop the resident broker of this configuration.

'recall query', 'expand', 'sources', 'refresh', 'hook' and 'sidecar-plugin'
run in a background broker that keeps adapters warm between commands. When
none runs, such a command runs in process and starts one as it ends, for the
commands after it. The broker listens on a Unix socket only this user can open (in
$XDG_RUNTIME_DIR/recall, else /tmp/recall-<uid>), and serves one
configuration: the user configuration, state folder and project recall.toml
in effect where it was started. It leaves after {DAEMON_IDLE_ENV}
without a command (default 900), and is replaced as soon as a configuration
file, the installed version or an adapter program changes. Output is the same
with or without it; --no-daemon or {DAEMON_ENV}=0 runs a command in process.

  status   say whether a broker runs for this configuration, and what it is
  start    start one now (if none runs) and wait until it listens and has
           started the default profile's adapters: from a login script or an
           agent host's session start, so the first command finds them warm
  stop     stop it; the next command starts a fresh one
  run      run the broker in the foreground (what commands start on demand)"""
EXIT_CODES = """exit codes:
  0  done (status: whether or not a broker runs)
  1  error: bad usage, no usable runtime folder for the socket, or (start)
     the broker could not start: its log is named and its last lines shown"""

STOP_WAIT_SECONDS = 10.0
LOG_TAIL_LINES = 12
WARM_WAIT_SECONDS = 30.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["status", "start", "stop", "run"], help="what to do")
    add_json(parser)
    parser.add_argument("--socket", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--idle-seconds", type=float, metavar="N",
                        help="with run: leave after N seconds without a command "
                        f"(default: ${DAEMON_IDLE_ENV} or 900)")


def run(args: argparse.Namespace) -> int:
    from broker.errors import UsageError
    from broker.surfaces.daemon.place import UnusablePlace, place_for

    try:
        place = place_for(os.environ, os.getcwd())
    except UnusablePlace as exc:
        raise UsageError(f"no usable folder for the resident broker's socket: {exc}") from None
    socket_path = args.socket or place.socket
    if args.action == "start":
        return start(place, args.json)
    if args.action == "run":
        from broker.surfaces.daemon.server import idle_limit, serve

        return serve(socket_path, idle_limit(args.idle_seconds))
    if args.action == "stop":
        return stop(socket_path, args.json)
    return status(socket_path, args.json)


def status(socket_path: str, as_json: bool) -> int:
    from broker.surfaces.daemon.client import NotListening, exchange

    try:
        _, state = exchange(socket_path, "GET", "/v1/daemon")
    except NotListening:
        state = None
    if as_json:
        print_json({"running": state is not None, "socket": socket_path, **(state or {})})
    elif state is None:
        sys.stdout.write(f"no resident broker for this configuration (its socket would be {socket_path})\n")
    else:
        sys.stdout.write(
            f"resident broker pid {state['pid']}, recall {state['version']}\n"
            f"  socket       {state['socket']}\n"
            f"  config       {state['config_file']}\n"
            + (f"  project      {state['project_file']}\n" if state.get("project_file") else "")
            + f"  up           {state['uptime_seconds']:g}s, {state['commands_served']} commands served\n"
            f"  idle         {state['idle_seconds']:g}s of {state['idle_limit_seconds']:g}s\n"
            + ("  adapters     starting (the default profile's)\n" if state.get("warming") else "")
        )
    return 0


def start(place: Place, as_json: bool) -> int:
    """Start the broker (a start that failed lately is tried again: it was asked for)."""
    from contextlib import suppress

    from broker.surfaces.daemon.client import start as start_broker

    with suppress(FileNotFoundError):
        os.unlink(place.failed)
    if start_broker(place):
        wait_until_warm(place.socket)
        return status(place.socket, as_json)
    try:
        with open(place.log, encoding="utf-8", errors="replace") as log:
            tail = log.readlines()[-LOG_TAIL_LINES:]
    except OSError:
        tail = []
    sys.stderr.write(f"recall: the resident broker could not start; its log: {place.log}\n")
    sys.stderr.writelines(f"  {line.rstrip()}\n" for line in tail)
    return 1


def wait_until_warm(socket_path: str) -> None:
    """Until the broker has started its adapters (an adapter that cannot start is the
    first command's to report), or ``WARM_WAIT_SECONDS`` have passed."""
    from broker.surfaces.daemon.client import NotListening, exchange

    deadline = time.monotonic() + WARM_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            _, state = exchange(socket_path, "GET", "/v1/daemon")
        except (NotListening, OSError):
            return
        if not state.get("warming"):
            return
        time.sleep(0.02)


def stop(socket_path: str, as_json: bool) -> int:
    from broker.surfaces.daemon.client import NotListening, exchange

    try:
        _, state = exchange(socket_path, "POST", "/v1/daemon/stop")
    except NotListening:
        state = None
    if state is not None:
        wait_until_gone(int(state["pid"]))
    if as_json:
        print_json({"stopped": state is not None, "pid": state["pid"] if state else None})
    elif state is None:
        sys.stdout.write("no resident broker was running for this configuration\n")
    else:
        sys.stdout.write(f"stopped the resident broker (pid {state['pid']})\n")
    return 0


def wait_until_gone(pid: int) -> None:
    """Until ``pid`` has ended (and with it the adapters it stops on the way out)."""
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)

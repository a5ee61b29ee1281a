"""recall daemon: list, show, start or stop the resident brokers that commands start on demand."""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

from broker.environment import DAEMON_ENV, DAEMON_IDLE_ENV
from broker.surfaces.commands._common import add_json, print_json
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.warm.daemon.socket_location import Place

HELP = "list, show, start or stop the resident brokers commands start on demand"
DESCRIPTION = f"""List, show, start or stop the resident brokers commands start on demand.

'recall query', 'expand', 'sources', 'refresh', 'hook' and 'sidecar-plugin'
run in a background broker that keeps adapters warm between commands. When
none runs, such a command runs in process and starts one as it ends, for the
commands after it. Output is the same with or without it; --no-daemon or
{DAEMON_ENV}=0 runs a command in process.

A broker serves one configuration: the user configuration, state folder and
project recall.toml in effect where it was started. It listens on a Unix
socket in $XDG_RUNTIME_DIR/recall, else /tmp/recall-<uid>. That folder must
be this user's and writable by no one else, the socket must be this user's,
and the process answering on it must run as this user; otherwise commands
say so in one line and run in process. The broker leaves after
{DAEMON_IDLE_ENV} without a command (default 900), and within a
second or so once its configuration or an adapter program changes or is
removed, its state folder or socket file is removed, or the installed
program changes.

  status   say whether a broker runs for this configuration, and what it is
  list     every resident broker of this user, whatever its configuration:
           pid, started, idle, memory of it and its adapters, configuration
  start    start one now (if none runs) and wait until it listens and has
           started the default profile's adapters: from a login script or an
           agent host's session start, so the first command finds them warm
  stop     stop it; the next command starts a fresh one (--all: stop every
           resident broker of this user)
  run      run the broker in the foreground (what commands start on demand)"""
EXIT_CODES = """exit codes:
  0  done (status: whether or not a broker runs)
  1  error: bad usage, no usable runtime folder for the socket, a broker
     that did not stop, or (start, run) the broker could not start: why, in
     one line"""

STOP_WAIT_SECONDS = 10.0
LOG_TAIL_BYTES = 4096
WARM_WAIT_SECONDS = 30.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["status", "list", "start", "stop", "run"], help="what to do")
    add_json(parser)
    parser.add_argument("--all", action="store_true", help="with stop: stop every resident broker of this user")
    parser.add_argument("--socket", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--idle-seconds", type=float, metavar="N",
                        help="with run: leave after N seconds without a command "
                        f"(default: ${DAEMON_IDLE_ENV} or 900)")


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.errors import UsageError
    from broker.warm.daemon.socket_location import UnusablePlace, place_for

    if args.all and args.action != "stop":
        raise UsageError("--all goes with stop")
    if args.action == "list":
        return list_brokers(args.json, io)
    if args.action == "stop" and args.all:
        return stop_all(args.json, io)
    try:
        place = place_for(os.environ, os.getcwd())
        socket_path = args.socket or place.socket
        if args.action == "start":
            return start(place, args.json, io)
        if args.action == "run":
            from broker.surfaces.cli import dispatch
            from broker.surfaces.http.asgi_app import create_app
            from broker.warm.daemon.server import idle_limit, serve

            return serve(socket_path, idle_limit(args.idle_seconds), dispatch, create_app)
        if args.action == "stop":
            from broker.warm.daemon.thin_client import wait_for_start

            wait_for_start(place)  # a broker a command just started in the background is stopped too
            return stop(socket_path, args.json, io)
        return status(socket_path, args.json, io)
    except UnusablePlace as exc:
        raise UsageError(f"no usable folder for the resident broker's socket: {exc}") from None


def status(socket_path: str, as_json: bool, io: Streams) -> int:
    from broker.warm.daemon.thin_client import NotListening, exchange

    try:
        _, state = exchange(socket_path, "GET", "/v1/daemon")
    except NotListening:
        state = None
    if as_json:
        print_json(io, {"running": state is not None, "socket": socket_path, **(state or {})})
    elif state is None:
        io.stdout.write(f"no resident broker for this configuration (its socket would be {socket_path})\n")
    else:
        io.stdout.write(
            f"resident broker pid {state['pid']}, recall {state['version']}\n"
            f"  socket       {state['socket']}\n"
            f"  config       {state['config_file']}\n"
            + (f"  project      {state['project_file']}\n" if state.get("project_file") else "")
            + f"  up           {state['uptime_seconds']:g}s, {state['commands_served']} commands served\n"
            f"  idle         {state['idle_seconds']:g}s of {state['idle_limit_seconds']:g}s\n"
            + ("  adapters     starting (the default profile's)\n" if state.get("warming") else "")
        )
    return 0


def start(place: Place, as_json: bool, io: Streams) -> int:
    """Start the broker (a start that failed lately is tried again: it was asked for)."""
    from contextlib import suppress

    from broker.warm.daemon.thin_client import start as start_broker

    with suppress(FileNotFoundError):
        os.unlink(place.failed)
    if start_broker(place):
        wait_until_warm(place.socket)
        return status(place.socket, as_json, io)
    io.stderr.write(f"recall: the resident broker could not start: {last_words(place.log)} (its log: {place.log})\n")
    return 1


def last_words(log_path: str) -> str:
    """The last line a broker that could not start wrote: why, as its command said it."""
    from broker.warm.daemon.socket_location import read_own_file

    try:
        tail = read_own_file(log_path, LOG_TAIL_BYTES).decode("utf-8", "replace")
    except OSError:
        tail = ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return "it said nothing"
    return lines[-1].removeprefix("recall: ")


def wait_until_warm(socket_path: str) -> None:
    """Until the broker has started its adapters (an adapter that cannot start is the
    first command's to report), or ``WARM_WAIT_SECONDS`` have passed."""
    from broker.warm.daemon.thin_client import NotListening, exchange

    deadline = time.monotonic() + WARM_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            _, state = exchange(socket_path, "GET", "/v1/daemon")
        except (NotListening, OSError):
            return
        if not state.get("warming"):
            return
        time.sleep(0.02)


def stop(socket_path: str, as_json: bool, io: Streams) -> int:
    from broker.warm.daemon.thin_client import NotListening, exchange

    try:
        _, state = exchange(socket_path, "POST", "/v1/daemon/stop")
    except NotListening:
        state = None
    if state is not None:
        wait_until_gone(int(state["pid"]))
    if as_json:
        print_json(io, {"stopped": state is not None, "pid": state["pid"] if state else None})
    elif state is None:
        io.stdout.write("no resident broker was running for this configuration\n")
    else:
        io.stdout.write(f"stopped the resident broker (pid {state['pid']})\n")
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


def list_brokers(as_json: bool, io: Streams) -> int:
    from broker.warm.daemon.roster import running_brokers

    brokers = running_brokers()
    if as_json:
        print_json(io, {"brokers": [broker.as_json() for broker in brokers]})
        return 0
    if not brokers:
        io.stdout.write("no resident broker is running for this user\n")
        return 0
    rows = [("PID", "STARTED", "IDLE", "MEMORY", "CONFIGURATION")]
    for broker in brokers:
        state = broker.state
        if state is None:
            idle, configuration = "-", f"(not answering on {broker.socket or 'an unnamed socket'})"
        else:
            idle = duration(float(state["idle_seconds"]))
            configuration = str(state["config_file"])
            if state.get("project_file"):
                configuration += f" + {state['project_file']}"
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(broker.started_at))
        rows.append((str(broker.pid), started, idle, f"{broker.memory_bytes / 1e6:.0f} MB", configuration))
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        io.stdout.write("  ".join([*cells, row[4]]) + "\n")
    return 0


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"


def stop_all(as_json: bool, io: Streams) -> int:
    from broker.warm.daemon.roster import running_brokers
    from broker.warm.daemon.roster import stop_all as stop_brokers

    brokers = running_brokers()
    left = stop_brokers(brokers, STOP_WAIT_SECONDS)
    stopped = [broker.pid for broker in brokers if broker.pid not in left]
    if as_json:
        print_json(io, {"stopped": stopped, "still_running": left})
    elif not brokers:
        io.stdout.write("no resident broker was running for this user\n")
    else:
        io.stdout.write(f"stopped {len(stopped)} resident broker(s): {', '.join(map(str, stopped)) or 'none'}\n")
    if left:
        io.stderr.write(f"recall: resident brokers still running after {STOP_WAIT_SECONDS:g}s (sent SIGTERM): "
                         f"{', '.join(map(str, left))}\n")
        return 1
    return 0

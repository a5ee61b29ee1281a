"""The thin client: run a command in the resident broker, starting one when none answers.

Standard library only, and as little of it as will do: a command served by a
warm broker should cost little more than the interpreter's own start. The
exchange is plain HTTP/1.1 over the Unix socket (``Connection: close``, one
request, one response); the broker is the ``recall serve`` application.

:func:`forward` returns ``None`` whenever the command should run in process
instead: resident mode is off, the command does not talk to sources, the
broker could not be started, or it answered anything but a complete reply.
Starting is serialised by a lock file, so two commands started together start
one broker between them. A broker that could not start (a configuration
error, say: the in-process path then reports it) is not tried again for
``RETRY_AFTER_FAILED_START`` seconds, so a broken configuration costs no more
than running in process.
"""

from __future__ import annotations

import _socket  # the C module alone: ``socket`` builds its enum classes on import
import json
import os
import sys

from broker import __version__
from broker.surfaces.daemon.place import Place, UnusablePlace, place_for

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

RESIDENT_COMMANDS = frozenset({"query", "expand", "sources", "refresh"})
SWITCH_ENV = "RECALL_DAEMON"
SWITCHED_OFF = frozenset({"0", "false", "no", "off"})
SERVER_ENV = "RECALL_SERVER"
# Flags that choose another path (or print help): argparse accepts any unambiguous prefix.
IN_PROCESS_FLAGS = ("--no-daemon", "--server", "--auth-token-env", "--help")
STALE_CODE = "resident_stale"
CONNECT_TIMEOUT = 2.0
START_TIMEOUT = 20.0
START_POLL = 0.02
RETRY_AFTER_FAILED_START = 30.0
CHUNK = 1 << 16


class Retired(Exception):
    """The broker found itself out of date and is leaving; start a fresh one."""


class NotListening(Exception):
    """Nothing accepts connections on the socket path (absent, or a dead broker's file)."""


def forward(argv: list[str]) -> int | None:
    """Run ``argv`` in the resident broker and print what it printed; ``None``: run it here."""
    if not wanted(argv, os.environ, stderr_is_terminal=sys.stderr.isatty()):
        return None
    try:
        place = place_for(os.environ, os.getcwd())
    except (UnusablePlace, OSError):
        return None
    reply = run_resident(place, argv)
    if reply is None:
        return None
    sys.stdout.write(reply["stdout"])
    sys.stdout.flush()
    sys.stderr.write(reply["stderr"])
    return int(reply["exit_code"])


def wanted(argv: list[str], environ: Mapping[str, str], *, stderr_is_terminal: bool) -> bool:
    if not argv or argv[0] not in RESIDENT_COMMANDS:
        return False
    if environ.get(SWITCH_ENV, "").strip().lower() in SWITCHED_OFF or environ.get(SERVER_ENV):
        return False
    if argv[0] == "refresh" and stderr_is_terminal:
        return False  # the progress display belongs to this terminal
    for arg in argv[1:]:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if name == "-h" or (len(name) > 2 and any(flag.startswith(name) for flag in IN_PROCESS_FLAGS)):
            return False
    return True


def run_resident(place: Place, argv: list[str]) -> dict[str, Any] | None:
    """The broker's ``{"exit_code", "stdout", "stderr"}`` for ``argv``, starting it if needed."""
    body = {"argv": argv, "version": __version__}
    for _ in range(2):
        try:
            status, reply = exchange(place.socket, "POST", "/v1/cli", body)
        except (NotListening, Retired):
            if not start(place):
                return None
            continue
        except OSError:
            return None
        if status == 200 and isinstance(reply, dict) and {"exit_code", "stdout", "stderr"} <= set(reply):
            return reply
        return None
    return None


def exchange(
    path: str, method: str, target: str, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """One HTTP request over the socket at ``path``: its status and JSON body."""
    payload = b"" if body is None else json.dumps(body).encode()
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    )
    connection = unix_socket()
    try:
        connection.settimeout(CONNECT_TIMEOUT)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise NotListening(path) from None
        connection.settimeout(None)  # a refresh may take as long as the folder needs
        connection.sendall(head.encode() + payload)
        received = bytearray()
        while chunk := connection.recv(CHUNK):
            received += chunk
    finally:
        connection.close()
    status, data = parse_response(bytes(received))
    if status == 409 and isinstance(data, dict) and data.get("error", {}).get("code") == STALE_CODE:
        raise Retired(data["error"].get("message", ""))
    return status, data


def parse_response(raw: bytes) -> tuple[int, Any]:
    head, separator, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if not separator or len(parts) < 2 or not parts[1].isdigit():
        raise OSError("the resident broker's reply is not an HTTP response")
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None or len(body) != length:
        raise OSError("the resident broker's reply was cut short")
    try:
        return int(parts[1]), json.loads(body)
    except ValueError:
        raise OSError("the resident broker's reply is not JSON") from None


def unix_socket() -> _socket.socket:
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def listening(path: str) -> bool:
    probe = unix_socket()
    try:
        probe.settimeout(CONNECT_TIMEOUT)
        probe.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        return False
    finally:
        probe.close()
    return True


def failed_lately(place: Place, now: float) -> bool:
    try:
        return now - os.stat(place.failed).st_mtime < RETRY_AFTER_FAILED_START
    except OSError:
        return False


def start(place: Place) -> bool:
    """Start the broker for ``place`` unless another command just did; True once it listens."""
    import fcntl
    import subprocess
    import time
    from contextlib import suppress

    if failed_lately(place, time.time()):
        return False
    lock = os.open(place.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(START_POLL)
        if listening(place.socket):
            return True  # started by the command that held the lock
        with suppress(FileNotFoundError):
            os.unlink(place.failed)
        log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "broker.surfaces.cli", "daemon", "run", "--socket", place.socket],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        finally:
            os.close(log)
        while time.monotonic() < deadline:
            if listening(place.socket):
                return True
            if process.poll() is not None:
                os.close(os.open(place.failed, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
                return False  # its log says why; this command runs here and reports it
            time.sleep(START_POLL)
        return False
    except OSError:
        return False
    finally:
        os.close(lock)

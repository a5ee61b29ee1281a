"""The thin client: run a command in the resident broker, starting one when none answers.

Standard library only, and as little of it as will do: a command served by a
warm broker should cost little more than the interpreter's own start. The
exchange is plain HTTP/1.1 over the Unix socket (``Connection: close``, one
request, one response); the broker is the ``recall serve`` application. A
command line travels as its arguments joined by NUL (which no argument can
hold) and comes back as the bytes it printed, framed by headers, so the client
needs no JSON (``json`` and the ``re`` it loads cost a fresh process more than
everything else here).

:func:`forward` returns ``None`` whenever the command should run in process
instead: resident mode is off, the command does not talk to sources, no broker
listens yet, or it answered anything but a complete reply. When none listens,
the command runs in process and a broker is started for the commands after it,
once it has ended (:func:`start_after_exit`): a first command costs what it
costs without a broker, not that plus the broker's start. Starting is
serialised by a lock file, so commands started together start one broker
between them, and a command that finds a start under way runs in process. A
broker that could not start (a configuration error, say: the in-process path
reports it) is not tried again for ``RETRY_AFTER_FAILED_START`` seconds.
``recall daemon start`` starts one and waits for it (:func:`start`).

Before it sends a byte, the client makes sure it talks to this user's broker:
the folder and the socket file must be this user's, writable by no one else
(:mod:`.place`), and the process listening must run as this user (:mod:`.peer`).
Anything else is refused with one line on stderr naming it, and the command runs
in process; no broker is started over it.
"""

from __future__ import annotations

import _socket  # the C module alone: ``socket`` builds its enum classes on import
import os
import sys

from broker import __version__
from broker.environment import DAEMON_ENV, SERVER_ENV
from broker.warm.argv_flags import before_operands, names
from broker.warm.daemon.peer_credentials import peer_uid
from broker.warm.daemon.socket_location import (
    Place,
    UntrustedPlace,
    UnusablePlace,
    fresh_file,
    modified_at,
    open_lock_file,
    place_for,
    socket_file_is_own,
)

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

RESIDENT_COMMANDS = frozenset({"query", "expand", "sources", "refresh", "hook", "sidecar-plugin"})
# An agent host's hook and a Sidecar plugin call read their input on stdin, which
# travels with the command line; installing a hook stays in process (it edits the
# host's settings files).
READS_STDIN = frozenset({"hook", "sidecar-plugin"})
HOOK_ACTIONS = frozenset({"claude-code", "pre-reply"})
# what either reads at most (broker.surfaces.agent_host_hook.MAX_INPUT_BYTES, sidecar.MAX_REQUEST_BYTES)
STDIN_LIMIT = 1 << 20
SWITCHED_OFF = frozenset({"0", "false", "no", "off"})
# Flags that choose another path (or print help)
IN_PROCESS_FLAGS = ("--no-daemon", "--server", "--auth-token-env", "--help", "-h")
STALE_CODE = "resident_stale"
# POST /v1/cli: the request body is the argv, NUL-joined, UTF-8 (surrogateescape, as the
# interpreter decodes a command line); the reply body is stdout then stderr, likewise.
ARGV_TYPE = "application/x-recall-argv"
VERSION_HEADER = "x-recall-version"
EXIT_HEADER = "x-recall-exit-code"
STDOUT_HEADER = "x-recall-stdout-bytes"
STDIN_HEADER = "x-recall-stdin-bytes"  # the body starts with this many bytes of standard input
CONNECT_TIMEOUT = 2.0
START_TIMEOUT = 20.0
START_POLL = 0.02
RETRY_AFTER_FAILED_START = 30.0
CHUNK = 1 << 16


class Retired(Exception):
    """The broker found itself out of date and is leaving; start a fresh one."""


class NotListening(Exception):
    """Nothing accepts connections on the socket path (absent, or a dead broker's file)."""


def forward(argv: list[str]) -> tuple[int | None, bytes | None]:
    """Run ``argv`` in the resident broker and print what it printed on this process's
    streams: its exit code, or ``None`` to run it here; and the standard input read
    already, which a command run here reads instead (``None``: nothing was read)."""
    if not wanted(argv, os.environ, stderr_is_terminal=sys.stderr.isatty()):
        return None, None
    stdin, cwd = None, os.getcwd()
    if argv[0] in READS_STDIN:
        if sys.stdin is None:
            return None, None
        stdin = sys.stdin.buffer.read(STDIN_LIMIT + 1)
        if len(stdin) > STDIN_LIMIT:
            return None, stdin  # refused in process, as it would be by the broker
        if argv[0] == "hook":
            cwd = host_directory(stdin, cwd)
    try:
        place = place_for(os.environ, cwd)
        reply = run_resident(place, argv, stdin)
    except UntrustedPlace as exc:
        sys.stderr.write(f"recall: not using the resident broker: {exc}; running in process\n")
        return None, stdin
    except (UnusablePlace, OSError):
        return None, stdin
    if reply is None:
        return None, stdin
    code, stdout, stderr = reply
    sys.stdout.write(stdout)
    sys.stdout.flush()
    sys.stderr.write(stderr)
    return code, stdin


def wanted(argv: list[str], environ: Mapping[str, str], *, stderr_is_terminal: bool) -> bool:
    if not argv or argv[0] not in RESIDENT_COMMANDS:
        return False
    if environ.get(DAEMON_ENV, "").strip().lower() in SWITCHED_OFF or environ.get(SERVER_ENV):
        return False
    if argv[0] == "refresh" and stderr_is_terminal:
        return False  # the progress display belongs to this terminal
    if argv[0] == "hook" and (len(argv) < 2 or argv[1] not in HOOK_ACTIONS):
        return False
    return not any(names(arg, IN_PROCESS_FLAGS) for arg in before_operands(argv[1:]))


def host_directory(stdin: bytes, cwd: str) -> str:
    """The folder a hook's input names as the host's (``cwd``, the hook then works
    there, its project file included), else ``cwd``."""
    if stdin.lstrip().startswith(b"{"):
        import json

        try:
            named = json.loads(stdin).get("cwd")
        except (ValueError, AttributeError):
            named = None
        if isinstance(named, str) and named and os.path.isdir(named):
            return named
    return cwd


def run_resident(place: Place, argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str] | None:
    """What the broker printed for ``argv`` (exit code, stdout, stderr); ``None``: run it
    here, a broker being started for later commands if none listens. ``stdin``: the bytes
    the command reads as its standard input. Raises :class:`UntrustedPlace` when what
    listens there is not this user's."""
    try:
        return run_there(place.socket, argv, stdin)
    except (NotListening, Retired):
        start_after_exit(place)
    except OSError:
        pass
    return None


def run_there(path: str, argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str] | None:
    """Run ``argv`` in the broker listening at ``path``; ``None`` if it did not answer it."""
    payload = "\0".join(argv).encode("utf-8", "surrogateescape")
    sent = {"Content-Type": ARGV_TYPE, VERSION_HEADER: __version__}
    if stdin is not None:
        payload = stdin + payload
        sent[STDIN_HEADER] = str(len(stdin))
    status, headers, body = request(path, "POST", "/v1/cli", payload, sent)
    if status == 409 and STALE_CODE.encode() in body:
        raise Retired(body.decode("utf-8", "replace"))
    code, printed = headers.get(EXIT_HEADER, ""), headers.get(STDOUT_HEADER, "")
    if status != 200 or not code.isdigit() or not printed.isdigit() or int(printed) > len(body):
        return None
    stdout, stderr = body[: int(printed)], body[int(printed) :]
    return int(code), stdout.decode("utf-8", "surrogateescape"), stderr.decode("utf-8", "surrogateescape")


def exchange(
    path: str, method: str, target: str, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """One JSON request over the socket at ``path`` (the daemon command's): status and reply."""
    import json

    payload = b"" if body is None else json.dumps(body).encode()
    status, _, data = request(path, method, target, payload, {"Content-Type": "application/json"})
    try:
        return status, json.loads(data)
    except ValueError:
        raise OSError("the resident broker's reply is not JSON") from None


def request(
    path: str, method: str, target: str, payload: bytes, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request over the socket at ``path``: the status, headers (lowercased
    names) and body of the reply. Nothing is sent unless this user's broker listens
    there (see :func:`connect`)."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n{head}"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    connection = connect(path)
    try:
        connection.settimeout(None)  # a refresh may take as long as the folder needs
        connection.sendall(head.encode() + payload)
        received = bytearray()
        while chunk := connection.recv(CHUNK):
            received += chunk
    finally:
        connection.close()
    return parse_response(bytes(received))


def parse_response(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, separator, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if not separator or len(parts) < 2 or not parts[1].isdigit():
        raise OSError("the resident broker's reply is not an HTTP response")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length", "")
    if not length.isdigit() or len(body) != int(length):
        raise OSError("the resident broker's reply was cut short")
    return int(parts[1]), headers, body


def unix_socket() -> _socket.socket:
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def connect(path: str) -> _socket.socket:
    """A connection to this user's broker at ``path``, nothing sent yet. Raises
    :class:`NotListening` when none listens there, :class:`UntrustedPlace` when the socket
    file or the process listening on it is another user's."""
    if not socket_file_is_own(path):
        raise NotListening(path)
    connection = unix_socket()
    try:
        connection.settimeout(CONNECT_TIMEOUT)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise NotListening(path) from None
        uid = peer_uid(connection)
        if uid != os.getuid():
            raise UntrustedPlace(f"{path} is answered by a process of uid {uid}, not of this user")
    except BaseException:
        connection.close()
        raise
    return connection


def listening(path: str) -> bool:
    try:
        connect(path).close()
    except NotListening:
        return False
    return True


def failed_lately(place: Place, now: float) -> bool:
    failed_at = modified_at(place.failed)
    return failed_at is not None and now - failed_at < RETRY_AFTER_FAILED_START


def start(place: Place) -> bool:
    """Start the broker for ``place`` unless another command just did; True once it listens."""
    import time

    if failed_lately(place, time.time()):
        return False
    try:
        lock = open_lock_file(place.lock)
    except OSError:
        return False
    try:
        deadline = time.monotonic() + START_TIMEOUT
        return lock_within(lock, deadline) and start_locked(place, deadline)
    except (OSError, UnusablePlace):
        return False
    finally:
        os.close(lock)


def wait_for_start(place: Place) -> None:
    """Until no command is starting the broker for ``place`` (each holds the start lock
    until its broker listens or has failed), or ``START_TIMEOUT`` has passed."""
    import time

    try:
        lock = open_lock_file(place.lock)
    except OSError:
        return
    try:
        lock_within(lock, time.monotonic() + START_TIMEOUT)
    except OSError:
        pass
    finally:
        os.close(lock)  # and with it the lock


def lock_within(lock: int, deadline: float) -> bool:
    """Take the start lock ``lock`` (a descriptor) before ``deadline``; False if it is still held then."""
    import fcntl
    import time

    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(START_POLL)


def start_after_exit(place: Place) -> None:
    """Start the broker for ``place`` once this process has ended, from a detached child
    that holds the start lock until the broker listens; nothing when another command is
    starting one or a start failed lately.

    The child keeps none of this process's descriptors but the lock and a pipe whose
    other end closes when this process exits: a reader of this command's output sees
    its end when the command ends, and the broker's imports never compete with the
    command for a CPU."""
    import fcntl
    import time

    if failed_lately(place, time.time()):
        return
    try:
        lock = open_lock_file(place.lock)
    except OSError:
        return
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another command is starting it
        ended, running = os.pipe()  # this process holds ``running`` open until it exits
        if os.fork() == 0:
            try:
                _detach(keep=(lock, ended))
                os.read(ended, 1)  # EOF: the command that started this child has ended
                start_locked(place, time.monotonic() + START_TIMEOUT)
            finally:
                os._exit(0)  # never the parent's exit handlers or buffered output
        os.close(ended)
    except OSError:
        pass
    finally:
        os.close(lock)  # the child's copy keeps the lock


def _detach(keep: tuple[int, ...]) -> None:
    """Leave the caller's session and let go of every descriptor but ``keep``; the
    standard streams go to /dev/null."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    kept = sorted({*keep, 0, 1, 2})
    for low, high in zip(kept, [*kept[1:], os.sysconf("SC_OPEN_MAX")], strict=True):
        os.closerange(low + 1, high)


def start_locked(place: Place, deadline: float) -> bool:
    """Start the broker, the start lock held; True once it listens. A broker that exits
    first leaves the failed mark (its log says why)."""
    import subprocess
    import time
    from contextlib import suppress

    if listening(place.socket):
        return True  # started by the command that held the lock before
    with suppress(FileNotFoundError):
        os.unlink(place.failed)
    log = fresh_file(place.log)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "broker.surfaces.cli", "daemon", "run", "--socket", place.socket],
            cwd=place.cwd,  # where its configuration's project file is found
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
            os.close(fresh_file(place.failed))
            return False
        time.sleep(START_POLL)
    return False

"""The resident broker process: the ``recall serve`` application on a private Unix socket.

Besides the ``/v1`` API it answers three routes meant for the thin client:

``POST /v1/cli``          run one command line (its arguments NUL-joined, after the
                          ``X-Recall-Stdin-Bytes`` it reads as standard input; the client's
                          version in ``X-Recall-Version``) against the warm broker; reply
                          the bytes the command prints in process, stdout then stderr,
                          with ``X-Recall-Exit-Code`` and ``X-Recall-Stdout-Bytes``
``GET /v1/daemon``        what this broker is: pid, socket, version, uptime, idle limit
``POST /v1/daemon/stop``  leave now

Before each command the broker compares its configuration files, adapter
programs and version with what it started with; on a difference it unlinks
its socket, answers ``409 resident_stale`` and leaves, and the client starts a
fresh one. Between commands it looks every second at what it lives on
(:mod:`.lifeline`: its configuration, state folder, socket file and installed
program) and leaves once any of it changed or is gone. It also leaves after
``idle_seconds`` without a request.

The broker neither imports the command line nor the HTTP surface: the command
that starts it hands it the function that runs a command line (``dispatch``,
given per-request streams whose buffers go back to the client) and the factory
of the application it serves.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, Protocol

import anyio.from_thread
import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from broker import __version__
from broker.api import OnTheBroker
from broker.config import Config
from broker.environment import DAEMON_IDLE_ENV
from broker.errors import RecallError
from broker.surfaces.http.responses import json_response, media_type, problem
from broker.surfaces.streams import Streams
from broker.warm.daemon.fingerprint import Fingerprint, version_change
from broker.warm.daemon.lifeline import CHECK_SECONDS, Lifeline
from broker.warm.daemon.peer_credentials import same_user
from broker.warm.daemon.thin_client import (
    ARGV_TYPE,
    EXIT_HEADER,
    STALE_CODE,
    STDIN_HEADER,
    STDOUT_HEADER,
    VERSION_HEADER,
)

DEFAULT_IDLE_SECONDS = 900.0
SHUTDOWN_GRACE = 5
TICK_SECONDS = 0.1  # how often uvicorn calls ``on_tick``
CHECK_TICKS = round(CHECK_SECONDS / TICK_SECONDS)


class Dispatch(Protocol):
    """Runs one command line with the streams ``io``, broker work on ``resident``: its exit code."""

    def __call__(self, argv: list[str], io: Streams, *, resident: OnTheBroker | None = None) -> int: ...


class AppFactory(Protocol):
    """Makes the HTTP application the broker serves, with its own routes and body types added."""

    def __call__(
        self, config: Config, *, profile: str, bound_host: str, extra_routes: list[Route],
        extra_body_types: frozenset[str],
    ) -> Starlette: ...


class Resident:
    """What the routes share: identity, activity, and whether this broker is leaving."""

    def __init__(self, config: Config, socket_path: str, idle_seconds: float) -> None:
        self.config = config
        self.socket_path = socket_path
        self.idle_seconds = idle_seconds
        self.fingerprint = Fingerprint.of(config)
        self.started_at = time.time()
        self.last_active = time.monotonic()
        self.in_flight = 0
        self.commands = 0
        self.leaving: str | None = None
        self.socket_inode: int | None = None
        self.lifeline: Lifeline | None = None  # once it listens
        # starting the default profile's adapters, from the moment it listens
        self.warming: asyncio.Task[None] | None = None

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "socket": self.socket_path,
            "version": __version__,
            "config_file": str(self.config.paths.config_file),
            "project_file": str(self.config.paths.project_file or "") or None,
            "started_at": self.started_at,
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "idle_seconds": round(time.monotonic() - self.last_active, 1) if not self.in_flight else 0.0,
            "idle_limit_seconds": self.idle_seconds,
            "commands_served": self.commands,
            "warming": self.warming is not None and not self.warming.done(),
            "leaving": self.leaving,
        }

    def stale(self, client_version: str) -> str | None:
        return version_change(client_version) or self.fingerprint.change()

    def idle_expired(self) -> bool:
        """Whether no command came for ``idle_seconds`` since the last one, or since the
        broker was ready (its adapters started): a broker is not idle while it starts."""
        if self.in_flight or self.warming is None or not self.warming.done():
            return False
        return time.monotonic() - self.last_active >= self.idle_seconds

    def retire(self, why: str) -> None:
        """Stop taking new commands: the socket path is freed for a successor at once."""
        if self.leaving is None:
            self.leaving = why
            self.release_socket()

    def release_socket(self) -> None:
        """Unlink the socket path, unless a successor's socket is there by now."""
        with suppress(OSError):
            if os.lstat(self.socket_path).st_ino == self.socket_inode:
                os.unlink(self.socket_path)


class Activity:
    """Counts requests in flight and notes the last one, for the idle limit.

    Asking the broker about itself (``/v1/daemon``) is not activity: a status
    check must not keep an idle broker alive.
    """

    def __init__(self, app: ASGIApp, resident: Resident) -> None:
        self.app = app
        self.resident = resident

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/v1/daemon"):
            await self.app(scope, receive, send)
            return
        self.resident.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.resident.in_flight -= 1
            self.resident.last_active = time.monotonic()


class SameUserProtocol(H11Protocol):
    """HTTP/1.1 that hangs up on a connection from any other user, before reading a byte."""

    def connection_made(self, transport: Any) -> None:  # asyncio.Transport
        super().connection_made(transport)
        connected = transport.get_extra_info("socket")
        if connected is None or not same_user(connected):
            sys.stderr.write("refused a connection from another user\n")
            transport.close()


class ResidentServer(uvicorn.Server):
    """The server, which starts the default profile's adapters once it listens (``warm``)."""

    def __init__(self, config: uvicorn.Config, resident: Resident, warm: Callable[[], Awaitable[None]]) -> None:
        super().__init__(config)
        self.resident = resident
        self.warm = warm

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit:
            self.resident.warming = asyncio.get_running_loop().create_task(self._warm())

    async def _warm(self) -> None:
        try:
            await self.warm()
        except Exception as exc:  # a command meets the same trouble and reports it
            sys.stderr.write(f"starting the adapters ahead of a command failed: {exc!r}\n")
        finally:
            self.resident.last_active = time.monotonic()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Here, not after run() returns: uvicorn re-raises SIGTERM once it has shut down.
        self.resident.release_socket()
        if self.resident.warming is not None:
            self.resident.warming.cancel()
        await super().shutdown(sockets)

    async def on_tick(self, counter: int) -> bool:
        if await super().on_tick(counter):
            return True
        resident = self.resident
        if resident.leaving is None and resident.idle_expired():
            resident.retire(f"idle for {resident.idle_seconds:g}s")
        if resident.leaving is None and resident.lifeline is not None and counter % CHECK_TICKS == 0:
            why = resident.lifeline.broken()
            if why:
                resident.retire(why)
        return resident.leaving is not None


def run_command(
    dispatch: Dispatch, argv: list[str], resident_broker: OnTheBroker, stdin: bytes = b""
) -> tuple[int, str, str]:
    """Run one command line as ``recall`` would, reading ``stdin``, with streams of its
    own: its exit code, and what it wrote to stdout and stderr."""
    io, stdout, stderr = Streams.in_memory(stdin)
    try:
        code = dispatch(argv, io, resident=resident_broker)
    except SystemExit as exit_:
        code = exit_code_of(exit_, io)
    return code, stdout.getvalue(), stderr.getvalue()


def exit_code_of(exit_: SystemExit, io: Streams) -> int:
    """The status the interpreter would exit with for ``exit_``, printing its message like it does."""
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code
    io.stderr.write(f"{exit_.code}\n")
    return 1


def routes(resident: Resident, dispatch: Dispatch) -> list[Route]:
    async def cli(request: Request) -> Response:
        version = request.headers.get(VERSION_HEADER)
        if media_type(request) != ARGV_TYPE or version is None:
            return problem(400, "bad_request", f"expected a {ARGV_TYPE} body and an {VERSION_HEADER} header")
        body = await request.body()  # read whole by the Guard, within its bound
        given = request.headers.get(STDIN_HEADER, "0")
        if not given.isdigit() or int(given) > len(body):
            return problem(400, "bad_request", f"{STDIN_HEADER} is not a length within the body")
        stdin, line = body[: int(given)], body[int(given) :]
        argv = line.decode("utf-8", "surrogateescape").split("\0") if line else []
        why = resident.leaving or resident.stale(version)
        if why:
            resident.retire(why)
            return problem(409, STALE_CODE, why)
        broker = request.app.state.broker

        def on_the_broker(work: Callable[[Any], Awaitable[Any]]) -> Any:
            async def call() -> Any:
                return await work(broker)

            return anyio.from_thread.run(call)

        resident.commands += 1
        code, stdout, stderr = await anyio.to_thread.run_sync(run_command, dispatch, argv, on_the_broker, stdin)
        printed = stdout.encode("utf-8", "surrogateescape")
        return Response(
            printed + stderr.encode("utf-8", "surrogateescape"),
            media_type="application/octet-stream",
            headers={EXIT_HEADER: str(code), STDOUT_HEADER: str(len(printed))},
        )

    async def status(request: Request) -> Response:
        return json_response(resident.status())

    async def stop(request: Request) -> Response:
        resident.retire("stopped by 'recall daemon stop'")
        return json_response(resident.status())

    return [
        Route("/v1/cli", cli, methods=["POST"]),
        Route("/v1/daemon", status, methods=["GET"]),
        Route("/v1/daemon/stop", stop, methods=["POST"]),
    ]


class CannotListen(RecallError):
    """The broker's socket cannot be put in place; the message says where and why."""


def bind(path: str) -> socket.socket:
    """A listening socket at ``path``, mode 0600 from its first moment, moved into place
    whole. On failure nothing is left: the staging name is unlinked again."""
    staging = f"{path}.{os.getpid()}"
    with suppress(FileNotFoundError):
        os.unlink(staging)  # a dead broker's of the same pid; a symlink is removed, not followed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        previous = os.umask(0o177)
        try:
            listener.bind(staging)
        finally:
            os.umask(previous)
        listener.listen(128)
        os.rename(staging, path)
    except OSError as exc:
        listener.close()
        with suppress(OSError):
            os.unlink(staging)
        why = "a folder is in its place" if isinstance(exc, IsADirectoryError) else exc.strerror or str(exc)
        raise CannotListen(f"cannot listen at {path}: {why}") from None
    return listener


def idle_limit(given: float | None) -> float:
    from broker.errors import UsageError

    if given is not None:
        return given
    text = os.environ.get(DAEMON_IDLE_ENV, "").strip()
    if not text:
        return DEFAULT_IDLE_SECONDS
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{DAEMON_IDLE_ENV}={text!r}: expected a number of seconds") from None


def serve(socket_path: str, idle_seconds: float, dispatch: Dispatch, create_app: AppFactory) -> int:
    """Serve the application ``create_app`` makes, and command lines run by ``dispatch``,
    until idle, stale, stopped or signalled; the socket path is released on the way out."""
    from adapter_sdk.residence import mark_long_lived
    from broker.config import load_config

    mark_long_lived()  # its adapters watch their sources at once
    config = load_config()
    resident = Resident(config, socket_path, idle_seconds)
    app = create_app(
        config,
        profile=config.profile("").name,
        bound_host="127.0.0.1",
        extra_routes=routes(resident, dispatch),
        extra_body_types=frozenset({ARGV_TYPE}),
    )
    server = ResidentServer(
        uvicorn.Config(
            Activity(app, resident),
            http=SameUserProtocol,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=SHUTDOWN_GRACE,
        ),
        resident,
        warm=lambda: app.state.broker.warm(),
    )
    listener = bind(socket_path)
    resident.lifeline = Lifeline.of(config, resident.fingerprint, socket_path)
    resident.socket_inode = resident.lifeline.socket_inode
    try:
        server.run(sockets=[listener])
    finally:
        resident.release_socket()
        listener.close()
        if resident.leaving:
            sys.stderr.write(f"resident broker left: {resident.leaving}\n")
    return 0

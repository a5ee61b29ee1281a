"""recall serve: the HTTP API for one profile, loopback by default."""

from __future__ import annotations

import argparse
import ipaddress
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from broker.surfaces.commands._common import add_profile
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from types import FrameType

HELP = "serve the HTTP API on loopback"
DESCRIPTION = """Serve the /v1 HTTP API for one profile, keeping adapters warm between requests.

Listens on 127.0.0.1:8765 unless --addr says otherwise; the host must be an IP
literal. Listening beyond loopback requires a bearer token: give one with
--auth-token-env, or one is generated and written (mode 0600) to the state
directory, and its path printed. Requests to /v1 carrying an Origin header are
refused; the search page at / accepts its own origin only. SIGINT or SIGTERM
shuts down gracefully and stops every adapter process."""
EXIT_CODES = """exit codes:
  1  error: bad usage, configuration or listen address
SIGINT or SIGTERM stops every adapter, then ends with that signal's status (130, 143)."""

DEFAULT_ADDR = "127.0.0.1:8765"
TOKEN_FILE = "serve-token"
SHUTDOWN_GRACE = 5


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--addr", default=DEFAULT_ADDR, metavar="HOST:PORT",
                        help=f"address to listen on (default {DEFAULT_ADDR}; port 0 picks a free one)")
    add_profile(parser)
    parser.add_argument("--auth-token-env", metavar="ENV",
                        help="environment variable holding the bearer token clients must send")
    parser.add_argument("--request-timeout", type=float, default=120.0, metavar="SECONDS",
                        help="bound on each request (default 120)")
    parser.add_argument("--log-requests", action="store_true",
                        help="log METHOD PATH STATUS DURATION per request to stderr (never query text)")


def parse_addr(addr: str) -> tuple[str, int]:
    from broker.errors import UsageError

    host, sep, port = addr.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--addr {addr!r}: expected HOST:PORT such as {DEFAULT_ADDR}")
    if not host:
        raise UsageError(f"--addr {addr!r}: name the host as an IP literal, such as 127.0.0.1")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise UsageError(
            f"--addr {addr!r}: the host must be an IP literal (hostnames are refused); "
            "use 127.0.0.1 for loopback"
        ) from None
    return host, int(port)


def given_token(args: argparse.Namespace) -> str | None:
    """The token ``--auth-token-env`` names, checked before anything is bound or written."""
    from broker.errors import UsageError

    if not args.auth_token_env:
        return None
    token = os.environ.get(args.auth_token_env, "").strip()
    if not token:
        raise UsageError(
            f"--auth-token-env: environment variable {args.auth_token_env} is empty or unset; "
            "refusing to serve without the token it names"
        )
    return token


def bearer_token(
    given: str | None, host: str, state_dir: Path
) -> tuple[str | None, Path | None]:
    """The token to require, and the file it was written to when recall generated it.

    Called only once the listener is bound: a server that never listened leaves
    no token file behind.
    """
    if given is not None:
        return given, None
    if ipaddress.ip_address(host).is_loopback:
        return None, None
    return generated_token(state_dir / TOKEN_FILE), state_dir / TOKEN_FILE


def generated_token(path: Path) -> str:
    """Reuse the token file if it holds one, else write 32 random bytes (urlsafe), mode 0600."""
    import secrets

    if path.exists():
        os.chmod(path, 0o600)
        existing = path.read_text().strip()
        if existing:
            return existing
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def run(args: argparse.Namespace, io: Streams) -> int:
    return serve(args, io)


def serve(args: argparse.Namespace, io: Streams, on_listening: Callable[[str], None] | None = None) -> int:
    """Serve until a signal; ``on_listening(url)`` runs once the socket accepts connections."""
    import socket

    import anyio
    import uvicorn

    from adapter_sdk.residence import mark_long_lived
    from broker.config import load_config
    from broker.errors import UsageError
    from broker.project_settings import vet_project_settings
    from broker.surfaces.http.asgi_app import create_app

    class _SignalledServer(uvicorn.Server):
        """A server that remembers the signal that stopped it, for the exit status (130, 143)."""

        stopped_by: int | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.stopped_by = sig
            super().handle_exit(sig, frame)

    mark_long_lived()  # its adapters watch their sources at once

    if args.request_timeout <= 0:
        raise UsageError("--request-timeout must be more than 0 seconds")
    host, port = parse_addr(args.addr)
    given = given_token(args)
    config = load_config()
    profile = config.profile(args.profile).name
    anyio.run(vet_project_settings, config)  # a trust-boundary crossing stops us before we listen

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: a response written as headers then body
    # must not wait for a delayed acknowledgement (about 40 ms on keep-alive).
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise UsageError(f"--addr {args.addr}: cannot listen: {exc.strerror or exc}") from None
    listener.listen(128)
    token, token_file = bearer_token(given, host, config.state_dir(profile))
    bound_port = listener.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host

    app = create_app(
        config,
        profile=profile,
        bound_host=host,
        token=token,
        request_timeout=args.request_timeout,
        log_requests=args.log_requests,
    )
    server = _SignalledServer(
        uvicorn.Config(
            app,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_keep_alive=int(max(args.request_timeout, 30)),
            timeout_graceful_shutdown=SHUTDOWN_GRACE,
            h11_max_incomplete_event_size=1 << 20,
        )
    )
    io.stdout.write(f"recall serve profile {profile} at http://{shown}:{bound_port}\n")
    io.stdout.flush()
    if token_file is not None:
        io.stdout.write(f"bearer token written to {token_file} (send Authorization: Bearer <token>)\n")
        io.stdout.flush()
    if on_listening is not None:
        on_listening(f"http://{shown}:{bound_port}/")
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()
    if server.stopped_by is not None:  # uvicorn re-raises it, which an inherited "ignore" swallows
        return 128 + server.stopped_by
    return 0 if server.started else 1

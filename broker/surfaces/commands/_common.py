"""Flags and plumbing shared by the commands that talk to sources."""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from broker.environment import DAEMON_ENV, SERVER_ENV
from broker.errors import UsageError
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.contracts import QueryRequest

T = TypeVar("T")


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="", help="profile to use (default: defaults.profile)")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for programs")


def add_server(parser: argparse.ArgumentParser) -> None:
    # Resident mode, opt-in: with RECALL_SERVER naming a running 'recall serve', every
    # command that talks to sources reuses its warm adapters instead of starting its own.
    parser.add_argument(
        "--server",
        metavar="URL",
        default=os.environ.get(SERVER_ENV) or None,
        help=f"ask a running 'recall serve' instead (default: ${SERVER_ENV}, if set)",
    )
    parser.add_argument(
        "--auth-token-env",
        metavar="ENV",
        help="environment variable holding the server's bearer token (with --server)",
    )
    # Commands otherwise run in the resident broker (see 'recall daemon'); the choice is
    # made before parsing, so here the flag only has to be accepted.
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help=f"run in this process, not in the resident broker (also {DAEMON_ENV}=0)",
    )


def with_broker(
    args: argparse.Namespace, work: Callable[[Any], Awaitable[T]],
    request: QueryRequest | None = None,
) -> T:
    """Run ``work(broker)`` against the local configuration, a ``--server``, or the resident broker.

    Given the ``request`` ``work`` will ask, a local broker's adapters for it are
    launched before the broker is imported (``broker.static_eligibility.start_contacted``)."""
    resident = getattr(args, "resident", None)
    if resident is not None:
        return resident(work)  # type: ignore[no-any-return]

    token_env = getattr(args, "auth_token_env", None)
    server = getattr(args, "server", None)
    if token_env and not server:
        raise UsageError("--auth-token-env needs --server")
    if server:
        import anyio

        from broker.surfaces.remote_broker import RemoteBroker

        token = os.environ.get(token_env) if token_env else None
        if token_env and not token:
            raise UsageError(f"--auth-token-env: environment variable {token_env} is empty or unset")

        answer: list[T] = []  # beside the main task, as broker.app.run hands it out

        async def remote() -> None:
            async with RemoteBroker(server, token=token, profile=getattr(args, "profile", "")) as broker:
                answer.append(await work(broker))

        anyio.run(remote)
        return answer[0]

    from broker.config import load_config
    from broker.warm.prestart import Prestarted

    config = load_config()
    # what this command's dispatch started ahead (a query's launch plan), or a fresh one
    prestarted = getattr(args, "prestarted", None) or Prestarted()
    try:
        if request is not None:
            from broker.static_eligibility import start_contacted

            launched = start_contacted(config, request, prestarted)
            plan = getattr(args, "launch_plan", None)
            if plan is not None:
                plan.keep(config, launched)
        from broker.app import run

        return run(config, work, prestarted)
    finally:
        prestarted.discard()


def print_json(io: Streams, data: Any) -> None:
    from broker.render.encode import json_document

    io.stdout.write(json_document(data))

"""recall doctor: check configuration, sources and adapters before a query depends on them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from broker.surfaces.commands._common import (
    add_json,
    add_profile,
    add_server,
    print_json,
    with_broker,
)
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from broker.doctor import Diagnosis

HELP = "check configuration, sources and adapters"
DESCRIPTION = """Check everything that has to hold before a query means anything:

  configuration    the configuration files load, merge and validate
  trust_boundary   a project recall.toml stayed inside what it may declare
  identity         every source has its own source_uid and source_id
  access           every eligible source's path location exists
  requirements     programs the adapters shell out to are on PATH
  health           every eligible source answers a usable health probe
  serving          every source serves its whole corpus (degraded if not)
  store_isolation  no two instances of one adapter opened the same store
  freshness        each source's freshness mode is one its adapter serves
  lineage          declared source-level derivation has no cycle
  abstention       the configured evaluation.must_abstain queries find nothing

Each check reports pass, fail, degraded or skipped. A fail means something is
misconfigured (exit 1); degraded means configured correctly but not serving
what it should, such as a stale index (exit 3).

With --conformance NAME, replay that adapter's recorded conformance
transcripts against its command instead: [adapters.NAME] conformance for an
adapter you registered, the committed suite for a built-in adapter. Exit 0
only if every recorded case replays as recorded.

With --server URL, ask a running 'recall serve' for its diagnosis instead: the
checks run against the server's configuration and its warm adapters."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile(parser)
    parser.add_argument(
        "--conformance", metavar="NAME", help="replay this adapter's recorded conformance suite"
    )
    add_json(parser)
    add_server(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.doctor import render, to_json

    diagnosis = remote(args) if args.server else local(args)
    if args.json:
        print_json(io, to_json(diagnosis))
    else:
        io.stdout.write(render(diagnosis))
    return diagnosis.exit_code


def remote(args: argparse.Namespace) -> Diagnosis:
    from broker.errors import UsageError

    if args.conformance:
        raise UsageError("--conformance cannot be combined with --server: it replays an adapter here")
    return with_broker(args, lambda broker: broker.doctor(args.profile))


def local(args: argparse.Namespace) -> Diagnosis:
    """A configuration that does not load is a diagnosis too, so no broker is opened here."""
    import anyio

    from broker.config import Config, load_config
    from broker.doctor import diagnose, diagnose_conformance
    from broker.errors import ConfigError, UsageError
    from broker.supervise import Supervisor

    if args.auth_token_env:
        raise UsageError("--auth-token-env needs --server")
    config: Config | ConfigError
    try:
        config = load_config()
    except ConfigError as exc:
        config = exc
    if args.conformance:
        return diagnose_conformance(config, args.conformance)

    async def probe() -> Diagnosis:
        from broker.app import Broker

        async with Supervisor() as supervisor:
            ask = Broker(config, supervisor).query if isinstance(config, Config) else None
            return await diagnose(config, supervisor, args.profile, ask=ask)

    return anyio.run(probe)

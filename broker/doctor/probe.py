"""Handshake and health-probe every eligible source once; the live checks read the results."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import anyio

from adapter_sdk.protocol import HealthResult, Manifest
from broker.config import Config, Profile, SourceConfig
from broker.plan import adapter_spec
from broker.supervise import HANDSHAKE_TIMEOUT, AdapterFailure, Supervisor

PROBE_TIMEOUT = timedelta(seconds=10)


@dataclass
class Probe:
    """What one source said: a manifest if the handshake worked, a health if the probe did."""

    source: SourceConfig
    manifest: Manifest | None = None
    health: HealthResult | None = None
    failure: str | None = None

    @property
    def usable(self) -> bool:
        return self.health is not None and self.health.usable


def eligible_sources(config: Config, profile: Profile) -> list[SourceConfig]:
    """Members a query could reach: enabled and within the ceiling, in profile order.

    The rest are the configuration working as asked, so they are not probed.
    """
    members = (config.source(source_id) for source_id in profile.sources)
    return [
        s
        for s in members
        if s is not None and s.enabled and not s.sensitivity > profile.max_sensitivity
    ]


async def probe_sources(
    config: Config, supervisor: Supervisor, profile: Profile, sources: list[SourceConfig]
) -> list[Probe]:
    probes = [Probe(source) for source in sources]

    async def probe(found: Probe) -> None:
        source = found.source
        client = supervisor.client(adapter_spec(config, profile.name, source))
        timeout = max(PROBE_TIMEOUT, timedelta(milliseconds=source.timeout_ms))
        try:
            with anyio.fail_after(HANDSHAKE_TIMEOUT):
                found.manifest = await client.initialize()
        except AdapterFailure as failure:
            found.failure = failure.message
            return
        except TimeoutError:
            found.failure = f"no answer to the handshake within {HANDSHAKE_TIMEOUT:g}s"
            return
        try:
            found.health = await client.health(datetime.now(UTC) + timeout)
        except AdapterFailure as failure:
            found.failure = failure.message

    async with anyio.create_task_group() as tasks:
        for found in probes:
            tasks.start_soon(probe, found)
    return probes

"""Listing configured sources, probing the ones this profile may use.

Each row's :class:`SourceState` and the listing's :class:`ListingStatus` are
decided here, once, by :mod:`broker.status`; every surface translates them and
none re-decides. With every probed source unusable the listing is ``failed``:
the CLI exits 4, HTTP answers 503, MCP marks the result an error, Sidecar shows
a danger notice; with any probed source short of healthy it is ``degraded``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from adapter_sdk.protocol import Sensitivity
from broker.config import Config, SourceConfig
from broker.contracts import SourceRow, SourcesResponse
from broker.plan import adapter_spec, effective_sensitivity
from broker.status import overall_status, source_state
from broker.supervise import AdapterFailure, Supervisor

PROBE_TIMEOUT = timedelta(seconds=10)


async def list_sources(config: Config, supervisor: Supervisor, profile_name: str = "") -> SourcesResponse:
    profile = config.profile(profile_name)
    sources = sorted(config.sources, key=lambda s: s.source_id)
    rows = [_static_row(s, profile.sources, profile.max_sensitivity) for s in sources]

    async def probe(row: dict[str, Any], source: SourceConfig) -> None:
        client = supervisor.client(adapter_spec(config, profile.name, source))
        timeout = max(PROBE_TIMEOUT, timedelta(milliseconds=source.timeout_ms))
        row["probed"] = True
        try:
            with anyio.fail_after(timeout.total_seconds()):
                manifest = await client.initialize()
            row.update(
                adapter_id=manifest.adapter_id,
                display_name=manifest.display_name,
                capabilities=[str(c) for c in manifest.capabilities],
                query_modes=[str(m) for m in manifest.query_modes],
                as_of_support=str(manifest.as_of_support),
                derives_from=manifest.derives_from,
            )
            if not row.get("freshness_policy") and manifest.freshness_policy:
                row["freshness_policy"] = manifest.freshness_policy  # the configuration's wins
            floor = effective_sensitivity(source, manifest)
            if floor != source.sensitivity:
                # the adapter's floor wins over the configuration; above the ceiling, stop here
                row.update(sensitivity=floor, permitted=floor <= profile.max_sensitivity)
                if not row["permitted"]:
                    row["probed"] = False
                    return
            if manifest.executable_requirements:
                row["executable_requirements"] = [
                    r.to_wire() for r in manifest.executable_requirements
                ]
            row["health"] = await client.health(datetime.now(UTC) + timeout)
        except (AdapterFailure, TimeoutError) as exc:
            row["error"] = exc.message if isinstance(exc, AdapterFailure) else "probe timed out"

    async with anyio.create_task_group() as tasks:
        for row, source in zip(rows, sources, strict=True):
            if row["enabled"] and row["in_profile"] and row["permitted"]:
                tasks.start_soon(probe, row, source)
    listed = [
        SourceRow(**row, status=source_state(
            row.get("health"), error=row.get("error"), enabled=row["enabled"], probed=row["probed"]
        ))
        for row in rows
    ]
    return SourcesResponse(
        profile=profile.name,
        max_sensitivity=profile.max_sensitivity,
        status=overall_status(row.status for row in listed),
        sources=listed,
    )


def _static_row(source: SourceConfig, members: list[str], ceiling: Sensitivity) -> dict[str, Any]:
    return {
        "source_uid": source.source_uid,
        "source_id": source.source_id,
        "adapter": source.adapter,
        "enabled": source.enabled,
        "in_profile": source.source_id in members,
        "location": source.location,
        "sensitivity": source.sensitivity,
        "permitted": source.sensitivity <= ceiling,
        "freshness_mode": source.freshness_mode,
        "freshness_policy": source.freshness_policy,
        "base_prior": source.base_prior,
        "intent_priors": dict(source.intent_priors) or None,
        "record_types": source.record_types,
        "timeout_ms": source.timeout_ms,
        "probed": False,
    }

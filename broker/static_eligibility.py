"""Which sources a query may contact, decided from the configuration alone.

These are planning's static checks, which :func:`broker.plan.consider` runs
before any adapter is started: a member of the profile is left out when it is
disabled, outside the sources the scope names, or above the profile's
sensitivity ceiling. Nothing here is asynchronous, so a cold command can start
the adapters it will ask (:mod:`broker.warm.prestart`) before it imports the broker,
and write each its handshake and the health probe it is asked first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

from adapter_sdk.protocol import (
    PROTOCOL_VERSION_MAX,
    PROTOCOL_VERSION_MIN,
    HealthParams,
    InitializeParams,
    Method,
    encode_frame,
    handshake_frame,
    request_frame,
)
from broker.config import Config, Profile, SourceConfig
from broker.contracts import QueryRequest, SkipReason
from broker.deadlines import query_budget, source_deadline
from broker.warm import prestart
from broker.warm.prestart import Prestarted


def static_exclusion(source: SourceConfig, profile: Profile, named: Sequence[str] | None) -> SkipReason | None:
    """Why ``source`` is left out without being contacted, or None if it is asked."""
    if not source.enabled:
        return SkipReason.disabled
    if named is not None and source.source_id not in named:
        return SkipReason.out_of_scope
    if source.sensitivity > profile.max_sensitivity:
        return SkipReason.sensitivity_ceiling
    return None


def contacted(config: Config, profile: Profile, named: Sequence[str] | None) -> Iterator[SourceConfig]:
    """The members of ``profile`` a request naming ``named`` sources (None: any) will contact."""
    for source in (config.source(i) for i in profile.sources):
        if source is not None and static_exclusion(source, profile, named) is None:
            yield source


def init_params(config: Config, profile: str, source: SourceConfig) -> InitializeParams:
    """What ``source``'s adapter is told at the handshake when ``profile`` asks it."""
    return InitializeParams(
        protocol_version_min=PROTOCOL_VERSION_MIN,
        protocol_version_max=PROTOCOL_VERSION_MAX,
        workdir=str(config.workdir(profile, source.source_uid)),
        source_id=source.source_id,
        location=source.location,
        base_dir=str(source.base_dir),
        settings=source.settings or None,
    )


# (source_uid, argv, env, workdir, cwd, greeting, pass_env): one call of broker.warm.prestart.start
Launch = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str, str | None, bytes, tuple[str, ...]]


def start_contacted(config: Config, request: QueryRequest, prestarted: Prestarted) -> list[Launch]:
    """Launch the adapters of the members the request's plan will contact, ahead of
    their spawn, into ``prestarted`` (:mod:`broker.warm.prestart`), each of the user's own greeted with its
    handshake and asked its health: a cold command imports the broker meanwhile. A
    request the plan refuses (an unknown profile, say) launches none. Returns what it
    launched."""
    profile = config.profiles.get(request.profile or config.defaults.profile)
    if profile is None:
        return []
    now = datetime.now(UTC)
    # the deadline the plan gives the probe (``broker.deadlines``), counted from now:
    # started now, the plan starts later, so its own deadline is no earlier
    usable = now + query_budget(request.budget.latency_ms) - timedelta(milliseconds=config.defaults.fusion_reserve_ms)
    launches: list[Launch] = []
    for source in contacted(config, profile, list(request.scope.source_ids or []) or None):
        registration = config.adapter_for(source)
        params = init_params(config, profile.name, source)
        # a project's source is told its settings only once they are vetted
        # (``broker.project_settings``): it is launched, and greeted by its spawn
        greeting = b"" if source.project_declared else handshake_frame(params)
        env = tuple(sorted(registration.env.items()))
        pass_env = config.pass_env(source)
        launches.append((source.source_uid, tuple(registration.argv), env, params.workdir, None, greeting, pass_env))
        # the probe the plan makes first (``broker.plan.consider``)
        probe = HealthParams(deadline=source_deadline(now, source.timeout_ms, usable)[0])
        frame = encode_frame(request_frame(prestart.AHEAD_ID, Method.health, probe.to_wire()))
        prestarted.start(source.source_uid, registration.argv, registration.env, params.workdir, None, greeting,
                         ahead=(Method.health, probe, frame), pass_env=pass_env)
    return launches


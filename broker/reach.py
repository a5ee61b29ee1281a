"""Which sources a query may contact, decided from the configuration alone.

These are planning's static checks, which :func:`broker.plan.consider` runs
before any adapter is started: a member of the profile is left out when it is
disabled, outside the sources the scope names, or above the profile's
sensitivity ceiling. Nothing here is asynchronous, so a cold command can start
the adapters it will ask (:mod:`broker.prestart`) before it imports the broker.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from broker import prestart
from broker.config import Config, Profile, SourceConfig
from broker.contracts import QueryRequest, SkipReason


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


# (source_uid, argv, env, workdir, cwd): one call of broker.prestart.start
Launch = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str, str | None]


def start_contacted(config: Config, request: QueryRequest) -> list[Launch]:
    """Launch the adapters of the members the request's plan will contact, ahead of
    their spawn (:mod:`broker.prestart`): a cold command imports the broker meanwhile.
    A request the plan refuses (an unknown profile, say) launches none. Returns what
    it launched."""
    profile = config.profiles.get(request.profile or config.defaults.profile)
    if profile is None:
        return []
    launches: list[Launch] = []
    for source in contacted(config, profile, list(request.scope.source_ids or []) or None):
        registration = config.adapter_for(source)
        workdir = str(config.workdir(profile.name, source.source_uid))
        env = tuple(sorted(registration.env.items()))
        launches.append((source.source_uid, tuple(registration.argv), env, workdir, None))
        prestart.start(source.source_uid, registration.argv, registration.env, workdir)
    return launches

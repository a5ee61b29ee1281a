"""Planning a query: which sources are asked, under which deadlines, and why not the rest.

:func:`open_plan` fixes what holds for every source (profile, deadline, scope);
:func:`consider` then decides one source, so each source goes from handshake
to search on its own clock and a slow one never holds back the others. Static
checks come first so that a source the request may not see is never
contacted: disabled, out of scope, above the profile's sensitivity ceiling.
The rest are checked in this order: handshake, the adapter's own sensitivity
floor against the ceiling (whatever the configuration says, a source is never
less sensitive than its adapter declares), health, as_of support, record types,
budget. Finally (:func:`settle`), two eligible instances of one adapter that
report the same store identity are both excluded, since neither can be told
apart from the other.

Budgets follow the deadline rule of :mod:`broker.deadlines`:

    query_budget    = latency_ms if > 0 else 5000 ms
    plan.deadline   = start + query_budget
    usable          = plan.deadline - fusion_reserve
    source_deadline = min(now + source.timeout_ms, usable)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from adapter_sdk.protocol import (
    AsOfSupport,
    Capability,
    HealthResult,
    HealthStatus,
    Manifest,
    SearchFilters,
    SearchOutcome,
    SearchParams,
    Sensitivity,
)
from broker.config import Config, Profile, SourceConfig
from broker.contracts import (
    PER_SOURCE_LIMIT,
    Plan,
    PlanSource,
    QueryRequest,
    SkipReason,
    TimeoutBudget,
)
from broker.deadlines import query_budget
from broker.deadlines import source_deadline as deadline_for_source
from broker.errors import PlanError, UnsatisfiableScope, UsageError
from broker.static_eligibility import init_params, static_exclusion
from broker.supervise import AdapterClient, AdapterFailure, AdapterSpec, Supervisor

HANDSHAKE_LIMIT = timedelta(seconds=10)
BUDGET_SPENT_STARTING = (
    "the query's latency budget ran out while the adapter was starting; "
    "raise the latency budget (--budget-ms), or keep adapters warm with 'recall serve'"
)


@dataclass
class Target:
    """An eligible source and the search it will receive."""

    source: SourceConfig
    client: AdapterClient
    manifest: Manifest
    health: HealthResult
    params: SearchParams
    timeout_budget: TimeoutBudget
    timeout_limit: timedelta

    @property
    def floor(self) -> Sensitivity:
        return effective_sensitivity(self.source, self.manifest)


def effective_sensitivity(source: SourceConfig, manifest: Manifest) -> Sensitivity:
    """The configured sensitivity, raised to the floor the adapter declares; never lowered."""
    return max(source.sensitivity, manifest.sensitivity, key=lambda s: s.level)


@dataclass
class Exclusion:
    """A source left out of a query, and why."""

    source: SourceConfig
    reason: SkipReason
    diagnostics: dict[str, Any] | None = None
    manifest: Manifest | None = None
    out_of_profile: bool = False


@dataclass
class QueryPlan:
    """What holds for every source of one query, and each source's verdict."""

    profile: Profile
    started_at: datetime
    deadline: datetime
    fusion_reserve: timedelta
    limit: int
    relevance_floor: float
    evaluated_at: datetime
    members: list[SourceConfig] = field(default_factory=list)
    named: list[str] | None = None
    targets: list[Target] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)

    def report(self, now: datetime) -> Plan:
        rows = [
            PlanSource(
                source_uid=t.source.source_uid,
                source_id=t.source.source_id,
                relevance_basis=t.manifest.relevance_basis,
                eligible=True,
                limit=t.params.limit,
                timeout_ns=max(0, _ns(t.params.deadline - now)),
                prior=t.source.base_prior,
            )
            for t in self.targets
        ]
        ordered = [e for e in self.exclusions if e.out_of_profile] + [
            e for e in self.exclusions if not e.out_of_profile
        ]
        rows += [
            PlanSource(
                source_uid=e.source.source_uid,
                source_id=e.source.source_id,
                relevance_basis=e.manifest.relevance_basis if e.manifest else None,
                eligible=False,
                reason=e.reason,
                diagnostics=e.diagnostics,
                limit=PER_SOURCE_LIMIT,
                timeout_ns=0,
                prior=e.source.base_prior,
            )
            for e in ordered
        ]
        return Plan(
            profile=self.profile.name,
            sources=rows,
            deadline=self.deadline,
            fusion_reserve_ns=_ns(self.fusion_reserve),
            limit=self.limit,
            relevance_floor=self.relevance_floor,
            evaluated_at=self.evaluated_at,
        )


def _ns(delta: timedelta) -> int:
    return int(delta.total_seconds() * 1_000_000_000)


def adapter_spec(config: Config, profile: str, source: SourceConfig) -> AdapterSpec:
    registration = config.adapter_for(source)
    return AdapterSpec(
        source_uid=source.source_uid,
        source_id=source.source_id,
        argv=list(registration.argv),
        env=dict(registration.env),
        workdir=config.workdir(profile, source.source_uid),
        init_params=init_params(config, profile, source),
        pass_env=config.pass_env(source),
    )


def open_plan(config: Config, request: QueryRequest, started_at: datetime) -> QueryPlan:
    """The request's profile, deadline and members; refuses what no source could answer."""
    profile = config.profile(request.profile)
    if not profile.sources:
        raise PlanError(
            f"profile {profile.name} has no sources to ask; configure one with "
            "'recall init --notes DIR' or add [[sources]] to the configuration"
        )
    scope = request.scope
    if scope.since is not None and scope.until is not None and scope.since > scope.until:
        raise UsageError(
            f"scope: since {scope.since.isoformat()} is after until {scope.until.isoformat()}; "
            "nothing could match, so the range is refused rather than answered as empty"
        )
    defaults = config.defaults
    deadline = started_at + query_budget(request.budget.latency_ms)
    plan = QueryPlan(
        profile=profile,
        started_at=started_at,
        deadline=deadline,
        fusion_reserve=timedelta(milliseconds=defaults.fusion_reserve_ms),
        limit=request.limit if request.limit > 0 else defaults.max_results,
        relevance_floor=defaults.relevance_floor,
        evaluated_at=request.valid_at or request.as_of or started_at,
    )

    plan.named = _named_sources(config, profile, request)
    plan.members = [s for s in (config.source(i) for i in profile.sources) if s is not None]
    for source_id in plan.named or ():
        if source_id not in profile.sources:
            source = config.source(source_id)
            assert source is not None
            plan.exclusions.append(
                Exclusion(
                    source,
                    SkipReason.out_of_profile,
                    {"profile": profile.name, "profiles": _profiles_holding(config, source_id)},
                    out_of_profile=True,
                )
            )
    return plan


def settle(plan: QueryPlan, verdicts: list[Target | Exclusion]) -> None:
    """Record each member's verdict in member order, then drop targets that share a store."""
    for verdict in verdicts:
        if isinstance(verdict, Target):
            plan.targets.append(verdict)
        else:
            plan.exclusions.append(verdict)
    _exclude_store_conflicts(plan)


def _named_sources(config: Config, profile: Profile, request: QueryRequest) -> list[str] | None:
    """Validate ``scope.source_ids``; None when the scope names no sources."""
    ids = list(dict.fromkeys(request.scope.source_ids or []))
    if not ids:
        return None
    unknown = [i for i in ids if config.source(i) is None]
    if unknown:
        raise UnsatisfiableScope(
            f"unsatisfiable scope: source {', '.join(unknown)} is not configured "
            f"(configured: {', '.join(s.source_id for s in config.sources) or 'none'})"
        )
    if not any(i in profile.sources for i in ids):
        homes = []
        for i in ids:
            profiles = _profiles_holding(config, i)
            homes.append(f"{i} is in {', '.join(profiles) if profiles else 'no profile'}")
        raise UnsatisfiableScope(
            f"unsatisfiable scope: none of the named sources is in profile "
            f"{profile.name} ({'; '.join(homes)})"
        )
    return ids


def _profiles_holding(config: Config, source_id: str) -> list[str]:
    return sorted(p.name for p in config.profiles.values() if source_id in p.sources)


async def consider(
    config: Config,
    supervisor: Supervisor,
    plan: QueryPlan,
    request: QueryRequest,
    source: SourceConfig,
) -> Target | Exclusion:
    """Decide one member: its search, with a deadline from its own clock, or why it is left out."""
    left_out = static_exclusion(source, plan.profile, plan.named)
    if left_out is not None:
        return Exclusion(source, left_out)

    client = supervisor.client(adapter_spec(config, plan.profile.name, source))
    remaining = max((plan.deadline - datetime.now(UTC)).total_seconds(), 0.0)
    try:
        with anyio.fail_after(min(HANDSHAKE_LIMIT.total_seconds(), remaining)):
            manifest = await client.initialize()
    except AdapterFailure as exc:
        return Exclusion(source, SkipReason.adapter_unavailable, _failure_diagnostics(exc))
    except TimeoutError:
        if remaining < HANDSHAKE_LIMIT.total_seconds():
            # the request's budget ran out, not the adapter: nothing says it is unavailable
            return Exclusion(source, SkipReason.budget_exhausted, {"detail": BUDGET_SPENT_STARTING})
        return Exclusion(source, SkipReason.adapter_unavailable, {
            "reason": "handshake_timeout",
            "detail": f"no handshake within {HANDSHAKE_LIMIT.total_seconds():g}s",
        })

    floor = effective_sensitivity(source, manifest)
    if floor.level > plan.profile.max_sensitivity.level:
        return Exclusion(source, SkipReason.sensitivity_ceiling, {
            "detail": f"adapter {source.adapter!r} declares its records {floor}, above profile "
            f"{plan.profile.name}'s ceiling {plan.profile.max_sensitivity}",
        }, manifest)

    now = datetime.now(UTC)
    source_deadline, its_own = deadline_for_source(now, source.timeout_ms, plan.deadline - plan.fusion_reserve)
    if its_own:
        budget, limit = TimeoutBudget.source_timeout, timedelta(milliseconds=source.timeout_ms)
    else:
        budget, limit = TimeoutBudget.request_latency, plan.deadline - plan.started_at

    try:
        health = await client.health(source_deadline)
    except AdapterFailure as exc:
        reason = SkipReason.denied if exc.outcome == SearchOutcome.denied else SkipReason.unhealthy
        if exc.outcome == SearchOutcome.timeout and budget == TimeoutBudget.request_latency:
            reason = SkipReason.budget_exhausted  # the request's deadline, not the source, ran out
        return Exclusion(source, reason, _failure_diagnostics(exc), manifest)
    if health.status == HealthStatus.denied:
        return Exclusion(source, SkipReason.denied, health.diagnostics, manifest)
    if not health.usable:
        return Exclusion(source, SkipReason.unhealthy, health.diagnostics, manifest)
    if request.as_of is not None and manifest.as_of_support == AsOfSupport.none:
        return Exclusion(source, SkipReason.as_of_unsupported, None, manifest)
    wanted = request.scope.record_types
    held = source.record_types or manifest.record_types
    if wanted and held and not set(wanted) & set(held):
        return Exclusion(source, SkipReason.record_type_mismatch, None, manifest)
    if source_deadline <= datetime.now(UTC):
        return Exclusion(source, SkipReason.budget_exhausted, None, manifest)

    scope = request.scope
    params = SearchParams(
        query=request.query,
        filters=SearchFilters(
            record_types=scope.record_types,
            since=scope.since,
            until=scope.until,
            entities=scope.entities,
            project=scope.project,
        ),
        limit=PER_SOURCE_LIMIT,
        deadline=source_deadline,
        context=request.context if Capability.context_expansion in manifest.capabilities else None,
        as_of=request.as_of,
    )
    return Target(source, client, manifest, health, params, budget, limit)


def _failure_diagnostics(exc: AdapterFailure) -> dict[str, Any]:
    return {"reason": exc.reason, "detail": exc.message}


def _exclude_store_conflicts(plan: QueryPlan) -> None:
    by_store: dict[tuple[str, str], list[Target]] = {}
    for target in plan.targets:
        identity = (target.health.diagnostics or {}).get("store_identity")
        if identity:
            by_store.setdefault((target.source.adapter, str(identity)), []).append(target)
    conflicted = {id(t) for group in by_store.values() if len(group) > 1 for t in group}
    if not conflicted:
        return
    kept = []
    for target in plan.targets:
        if id(target) not in conflicted:
            kept.append(target)
            continue
        identity = str((target.health.diagnostics or {}).get("store_identity"))
        peers = by_store[(target.source.adapter, identity)]
        plan.exclusions.append(
            Exclusion(
                target.source,
                SkipReason.store_identity_conflict,
                {
                    "store_identity": identity,
                    "conflicting_sources": sorted(p.source.source_id for p in peers),
                },
                target.manifest,
            )
        )
    plan.targets = kept

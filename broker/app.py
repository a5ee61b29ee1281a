"""The application layer: one code path for query, expand, refresh and sources.

Every surface (CLI, HTTP, MCP, Sidecar, evaluation) calls a :class:`Broker`.
Surfaces parse and render; ranking, filtering, verdicts and shaping happen here
and in the pure modules this one calls. The clock is read here, never in them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

import anyio

from adapter_sdk.protocol import SearchParams
from broker.api import BrokerAPI
from broker.candidate_admission import admit, drop_references, failure_report, stamp
from broker.config import Config, SourceConfig
from broker.contracts import (
    DEFAULT_RESPONSE_TOKENS,
    Candidate,
    ExpandRequest,
    ExpandResponse,
    Freshness,
    QueryRequest,
    QueryResponse,
    RefreshRequest,
    RefreshResponse,
    SearchOutcome,
    SourceReport,
    SourcesResponse,
    Suppression,
    SuppressionReason,
)
from broker.index_lag import catching_up
from broker.plan import Exclusion, QueryPlan, Target, adapter_spec, consider, open_plan, settle
from broker.project_settings import vet_project_settings
from broker.requests import check_query, check_refresh
from broker.severity import decide_coverage, decide_outcome
from broker.static_eligibility import contacted
from broker.supervise import AdapterFailure, Supervisor

if TYPE_CHECKING:
    from broker.doctor import Diagnosis
    from broker.fusion import SourceFacts
    from broker.refresh import Progress
    from broker.warm.prestart import Prestarted

SUCCESSOR_SEARCH_LIMIT = 5
T = TypeVar("T")


def now() -> datetime:
    return datetime.now(UTC)


class Broker(BrokerAPI):
    """A configuration plus a pool of adapter processes."""

    def __init__(self, config: Config, supervisor: Supervisor) -> None:
        self.config = config
        self.supervisor = supervisor

    # expand, refresh and sources import their modules when called: a query needs none
    async def expand(self, request: ExpandRequest) -> ExpandResponse:
        from broker.expand import expand as expand_locator

        return await expand_locator(self.config, self.supervisor, request)

    async def refresh(
        self, request: RefreshRequest, progress: Progress | None = None
    ) -> RefreshResponse:
        from broker.refresh import refresh as refresh_sources

        return await refresh_sources(self.config, self.supervisor, check_refresh(request), progress)

    async def sources(self, profile: str = "") -> SourcesResponse:
        from broker.listing import list_sources

        return await list_sources(self.config, self.supervisor, profile)

    async def warm(self, profile: str = "") -> None:
        """Start the adapters of ``profile``'s sources and probe their health, so the first
        query finds them running. A source that fails here is left for a query to meet
        and report: nothing is said or cached for it beyond what a probe caches anyway."""
        chosen = self.config.profile(profile)

        async def start(source: SourceConfig) -> None:
            client = self.supervisor.client(adapter_spec(self.config, chosen.name, source))
            with suppress(AdapterFailure):
                await client.initialize()
                await client.health(now() + timedelta(milliseconds=source.timeout_ms))

        async with anyio.create_task_group() as tasks:
            for source in contacted(self.config, chosen, None):
                tasks.start_soon(start, source)

    async def doctor(self, profile: str = "") -> Diagnosis:
        """``recall doctor`` over this broker's adapter processes."""
        from broker.doctor import diagnose

        return await diagnose(self.config, self.supervisor, profile, ask=self.query)

    # -- query ---------------------------------------------------------------

    async def query(self, request: QueryRequest) -> QueryResponse:
        # refused before any source is asked: an empty question would read as an abstention
        check_query(request)
        started = now()
        clock = time.perf_counter_ns()
        plan = open_plan(self.config, request, started)

        # Each member goes from handshake through health to search on its own: a slow
        # source spends its own deadline, never the others'.
        verdicts: list[Target | Exclusion | None] = [None] * len(plan.members)
        searched: dict[str, tuple[SourceReport, list[Candidate], int]] = {}
        undecided = len(plan.members)  # members neither searching yet nor done

        def decided() -> None:
            nonlocal undecided
            undecided -= 1
            if undecided == 0:
                load_fusion()  # while the adapters search

        async def ask(index: int, source: SourceConfig) -> None:
            searching = False

            def sent() -> None:
                nonlocal searching
                searching = True
                decided()

            try:
                verdict = verdicts[index] = await consider(
                    self.config, self.supervisor, plan, request, source
                )
                if isinstance(verdict, Target):
                    searched[source.source_uid] = await self._search(plan, verdict, sent=sent)
            finally:
                if not searching:  # left out, or done without its search ever written
                    decided()

        async with anyio.create_task_group() as tasks:
            for index, source in enumerate(plan.members):
                tasks.start_soon(ask, index, source)
        from broker.fusion import FusionParams, fuse
        from broker.response_budget import shape

        settle(plan, [v for v in verdicts if v is not None])  # a conflicted target's search is dropped
        above_ceiling = sum(searched[t.source.source_uid][2] for t in plan.targets)

        reports = [searched[t.source.source_uid][0] for t in plan.targets]
        reports += [
            SourceReport(
                source_uid=e.source.source_uid,
                source_id=e.source.source_id,
                outcome=SearchOutcome.skipped,
                reason=e.reason,
                diagnostics=e.diagnostics,
            )
            for e in plan.exclusions
        ]
        pool = [c for t in plan.targets for c in searched[t.source.source_uid][1]]
        facts = {
            t.source.source_uid: self._facts(t, len(searched[t.source.source_uid][1]))
            for t in plan.targets
        }
        params = FusionParams(
            query=request.query,
            evaluated_at=plan.evaluated_at,
            known_at=request.as_of,
            relevance_floor=plan.relevance_floor,
            limit=plan.limit,
            mode=request.mode,
            suppress_lineages=frozenset(request.suppress_lineages or ()),
            include_stale=request.include_stale,
        )
        uid_by_id = {s.source_id: s.source_uid for s in self.config.sources}
        fused = fuse(pool, facts, uid_by_id, params)
        if fused.missing_successors:
            extra = await self._fetch_successors(plan, fused.missing_successors)
            if extra:
                fused = fuse(pool + extra, facts, uid_by_id, params)

        suppressed: list[Suppression] = []
        if above_ceiling:
            suppressed.append(Suppression(reason=SuppressionReason.sensitivity, count=above_ceiling))
        suppressed += fused.suppressed
        target_by_uid = {t.source.source_uid: t for t in plan.targets}
        for result in fused.results:
            uid = result.explanation.source_uid
            result.explanation.freshness = self._freshness(
                target_by_uid[uid], searched[uid][0], result.primary
            )

        response = QueryResponse(
            results=fused.results,
            source_outcomes=reports,
            plan=plan.report(now()),
            suppressed=suppressed,
            outcome=decide_outcome(bool(fused.results), reports),
            coverage=decide_coverage(reports),
            truncated=fused.truncated,
            dropped_results=fused.dropped_results,
        )
        if fused.temporal_problems:
            response.temporal_problems = fused.temporal_problems
        tokens = request.budget.response_tokens
        response = shape(response, DEFAULT_RESPONSE_TOKENS if tokens == 0 else tokens, request.budget.surface)
        response.elapsed_ns = time.perf_counter_ns() - clock
        return response

    async def _search(
        self, plan: QueryPlan, target: Target, sent: Callable[[], None] | None = None
    ) -> tuple[SourceReport, list[Candidate], int]:
        source, params = target.source, target.params
        clock = time.perf_counter_ns()
        try:
            answer = await target.client.search(params, sent)
        except AdapterFailure as failure:
            report = failure_report(
                failure,
                source_uid=source.source_uid,
                source_id=source.source_id,
                elapsed_ns=time.perf_counter_ns() - clock,
                timeout_budget=target.timeout_budget,
                timeout_limit_ns=int(target.timeout_limit.total_seconds() * 1e9),
                deadline=params.deadline,
            )
            if report.timeout is not None:
                report.timeout.catching_up = catching_up(target.health, source.source_id)
            return report, [], 0
        admitted = admit(
            answer.result,
            malformed=answer.malformed,
            source_uid=source.source_uid,
            source_id=source.source_id,
            floor=target.floor,
            ceiling=plan.profile.max_sensitivity,
            elapsed_ns=time.perf_counter_ns() - clock,
            protected=self._protected_from(source),
            project_file=str(source.declared_in.file) if source.project_declared else None,
        )
        report = admitted.report
        report.cold_start_ns = target.health.cold_start_ns
        report.index_generation = target.health.index_generation
        report.confirmed_at = target.health.last_success_at
        return report, admitted.candidates, admitted.above_ceiling

    def _protected_from(self, source: SourceConfig) -> frozenset[str]:
        """The user's own sources, which a source a project file added may not reference."""
        if not source.project_declared:
            return frozenset()
        return frozenset(s.source_id for s in self.config.sources if not s.project_declared)

    async def _fetch_successors(self, plan: QueryPlan, locators: list[str]) -> list[Candidate]:
        """Look up successors the query did not retrieve, by locator, within the deadline."""
        usable = plan.deadline - plan.fusion_reserve
        found: list[Candidate] = []

        async def fetch(locator: str) -> None:
            source_id, _, local = locator.partition(":")
            target = next((t for t in plan.targets if t.source.source_id == source_id), None)
            if target is None or not local or usable <= now():
                return
            record = local.split("#", 1)[0]
            params = SearchParams(
                query=record, limit=SUCCESSOR_SEARCH_LIMIT, deadline=usable, as_of=target.params.as_of
            )
            try:
                answer = await target.client.search(params)
            except AdapterFailure:
                return
            for wire in answer.result.candidates or []:
                wire_local = wire.locator.split(":", 1)[-1]
                if record not in (wire.source_record_id, wire_local, wire_local.split("#", 1)[0]):
                    continue
                candidate = stamp(
                    wire,
                    source_uid=target.source.source_uid,
                    source_id=source_id,
                    floor=target.floor,
                )
                if isinstance(candidate, Candidate) and candidate.sensitivity <= plan.profile.max_sensitivity:
                    drop_references(candidate, self._protected_from(target.source))
                    candidate.metadata = {**(candidate.metadata or {}), "promoted_successor": True}
                    found.append(candidate)

        async with anyio.create_task_group() as tasks:
            for locator in dict.fromkeys(locators):
                tasks.start_soon(fetch, locator)
        return sorted(found, key=lambda c: (c.locator, c.candidate_id))

    def _facts(self, target: Target, pool_size: int) -> SourceFacts:
        from broker.fusion import SourceFacts

        source = target.source
        upstream = target.manifest.derives_from
        upstream_source = self.config.source(upstream) if upstream else None
        return SourceFacts(
            source_uid=source.source_uid,
            source_id=source.source_id,
            base_prior=source.base_prior,
            intent_priors=dict(source.intent_priors),
            derives_from_uid=upstream_source.source_uid if upstream_source else None,
            location_key=_location_key(source),
            pool_size=pool_size,
        )

    def _freshness(
        self, target: Target, report: SourceReport, primary: Candidate
    ) -> Freshness:
        health = target.health
        return Freshness.model_construct(
            mode=target.source.freshness_mode or target.manifest.freshness_modes[0],
            source_revision=report.source_watermark,
            index_generation=health.index_generation,
            index_model=health.index_model,
            index_config=health.index_config,
            observed_at=primary.observed_at,
            confirmed_at=primary.confirmed_at,
            # the source's declared support, asked for or not (as the reference reports it)
            as_of_honored=str(target.manifest.as_of_support),
        )


def load_fusion() -> None:
    """Load what fuses and shapes an answer, a tenth of a cold query's time: called once
    every member is searching or done, so it loads while the adapters work."""
    import broker.fusion  # noqa: F401
    import broker.response_budget  # noqa: F401


def _location_key(source: SourceConfig) -> str | None:
    if source.location is None:
        return None
    return f"{source.location_kind or 'opaque'}:{source.location}"


@asynccontextmanager
async def open_broker(config: Config, prestarted: Prestarted | None = None) -> AsyncIterator[Broker]:
    """A broker whose adapter processes all end when the block exits; it adopts the
    processes ``prestarted`` holds for the sources it asks.

    A project source's settings are checked against its adapter's schema first
    (:mod:`broker.project_settings`); a crossing raises ``TrustError`` and no
    source is asked anything. An error raised in the block reaches the caller
    as itself, not wrapped in the exception group of the supervisor's task group.
    """
    await vet_project_settings(config)
    error: Exception | None = None
    async with Supervisor(prestarted=prestarted) as supervisor:
        try:
            yield Broker(config, supervisor)
        except Exception as exc:
            error = exc
    if error is not None:
        raise error


def run(config: Config, work: Callable[[Broker], Awaitable[T]], prestarted: Prestarted | None = None) -> T:
    """Run ``await work(broker)`` to completion from synchronous code, adopting the
    processes ``prestarted`` holds; every adapter process has ended when it returns.

    The answer is handed out beside the event loop's main task, not as its result:
    leaving the loop, asyncio (3.11) asks for the SIGINT handler, which holds that
    task, and builds an error message with its repr, the whole answer's repr in it."""
    answer: list[T] = []

    async def main() -> None:
        async with open_broker(config, prestarted) as broker:
            answer.append(await work(broker))

    anyio.run(main)
    return answer[0]


__all__ = ["Broker", "open_broker", "run"]

"""Questions the configuration says must find nothing, asked for real."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from broker.config import Config
from broker.contracts import Outcome, QueryRequest, QueryResponse
from broker.doctor.diagnosis import Check, CheckName, CheckStatus, Problem
from broker.errors import RecallError
from broker.severity import Severity, severity

# how the check asks a question: the application's query, passed in (doctor sits above no app)
Ask = Callable[[QueryRequest], Awaitable[QueryResponse]]


async def abstention_check(config: Config, ask: Ask, profile: str) -> Check:
    """Each ``evaluation.must_abstain`` query, limit 1: answering fails; no proof degrades.

    An abstention counts only if every asked source answered; one drawn from
    sources that could not search proves nothing about the corpus.
    """
    cases = config.evaluation.must_abstain if config.evaluation else []
    if not cases:
        return Check(
            CheckName.abstention,
            CheckStatus.skipped,
            "no evaluation.must_abstain queries are configured",
        )
    assert config.evaluation is not None
    origin = config.evaluation.origin("must_abstain").file
    file = str(origin) if origin else None
    failed: list[Problem] = []
    unproven: list[Problem] = []
    for index, case in enumerate(cases):
        key = f"evaluation.must_abstain[{index}]"
        try:
            response = await ask(QueryRequest(query=case.query, profile=profile, limit=1))
        except RecallError as exc:
            failed.append(Problem(f"{case.query!r} could not be asked: {exc}", file=file, key=key))
            continue
        if response.outcome == Outcome.answered:
            failed.append(Problem(_answered(case.query, case.reason, response), file=file, key=key))
        elif severity(response.outcome, response.coverage) >= Severity.degraded:
            unproven.append(Problem(_unproven(case.query, response), file=file, key=key))
    abstained = len(cases) - len(failed) - len(unproven)
    detail = f"{abstained} of {len(cases)} must-abstain queries abstained"
    if failed:
        return Check(CheckName.abstention, CheckStatus.failed, detail, failed + unproven)
    if unproven:
        return Check(CheckName.abstention, CheckStatus.degraded, detail, unproven)
    return Check(CheckName.abstention, CheckStatus.passed, detail)


def _answered(query: str, reason: str, response: QueryResponse) -> str:
    top = response.results[0].primary.locator if response.results else "a result"
    return f"{query!r} answered with {top}; it must abstain because {reason}"


def _unproven(query: str, response: QueryResponse) -> str:
    missing = sorted(r.source_id for r in response.source_outcomes or [] if r.degrades)
    who = f"{', '.join(missing)} could not search" if missing else "no source searched"
    return f"{query!r} found nothing, but {who}, so the abstention is not proven"

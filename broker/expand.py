"""Expanding a locator into its evidence: stateless, re-checked against the ceiling."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapter_sdk.protocol import ExpandParams
from broker.config import Config
from broker.contracts import DEFAULT_EXPAND_BUDGET_BYTES, ExpandRequest, ExpandResponse
from broker.errors import ExpandError, ExpandErrorCode
from broker.locator import Locator
from broker.plan import adapter_spec, effective_sensitivity
from broker.sanitize import EXPANSION_BYTES, clean_expansion, clean_line
from broker.supervise import AdapterFailure, FailureReason, Supervisor

EXPAND_TIMEOUT = timedelta(seconds=10)

_CODES = {
    FailureReason.denied: ExpandErrorCode.denied,
    FailureReason.locator_unknown: ExpandErrorCode.locator_unknown,
    FailureReason.locator_expired: ExpandErrorCode.locator_expired,
    FailureReason.source_not_configured: ExpandErrorCode.not_configured,
    FailureReason.unreachable: ExpandErrorCode.unreachable,
    FailureReason.spawn_failed: ExpandErrorCode.unreachable,
    FailureReason.protocol_version_unsupported: ExpandErrorCode.unreachable,
    FailureReason.budget_exceeded: ExpandErrorCode.budget_exceeded,
    FailureReason.deadline_exceeded: ExpandErrorCode.timeout,
    FailureReason.deadline_exceeded_unresponsive: ExpandErrorCode.timeout,
    FailureReason.handshake_timeout: ExpandErrorCode.timeout,
}


async def expand(config: Config, supervisor: Supervisor, request: ExpandRequest) -> ExpandResponse:
    source_id = Locator.parse(request.locator).source_id
    profile = config.profile(request.profile)
    source = config.source(source_id)
    if source is None:
        raise ExpandError(
            ExpandErrorCode.not_configured,
            f"source_not_configured: {source_id!r} is not a configured source "
            f"(configured: {', '.join(s.source_id for s in config.sources) or 'none'})",
        )
    if source.sensitivity > profile.max_sensitivity:
        # said the same way whether or not the record exists
        raise ExpandError(
            ExpandErrorCode.denied,
            f"denied: source {source_id} is above profile {profile.name}'s ceiling "
            f"{profile.max_sensitivity}",
        )
    # the broker keeps at most EXPANSION_BYTES, so no adapter is asked for more
    budget = min(request.budget_bytes or DEFAULT_EXPAND_BUDGET_BYTES, EXPANSION_BYTES)
    deadline = request.deadline or datetime.now(UTC) + EXPAND_TIMEOUT
    client = supervisor.client(adapter_spec(config, profile.name, source))
    try:
        manifest = await client.initialize()
        floor = effective_sensitivity(source, manifest)
        if floor.level > profile.max_sensitivity.level:
            raise ExpandError(
                ExpandErrorCode.denied,
                f"denied: adapter {source.adapter!r} declares source {source_id}'s records "
                f"{floor}, above profile {profile.name}'s ceiling {profile.max_sensitivity}",
            )
        result = await client.expand(
            ExpandParams(
                locator=request.locator, detail=request.detail, budget_bytes=budget, deadline=deadline
            )
        )
    except AdapterFailure as failure:
        code = _CODES.get(failure.reason, ExpandErrorCode.failed)
        raise ExpandError(code, f"{failure.reason}: {clean_line(failure.message, 300)}") from None
    content, cut = clean_expansion(result.content, budget)
    return ExpandResponse(
        content=content,
        source_revision=result.source_revision,
        truncated=result.truncated or cut,
        truncation_boundary="recall_sanitize_limit" if cut else result.truncation_boundary,
        provenance=result.provenance,
    )
